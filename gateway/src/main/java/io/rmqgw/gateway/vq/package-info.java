/**
 * Virtual queues: more consumers than a topic has queues, for unmodified clients. The gateway consumes a
 * group's real queues itself ({@link io.rmqgw.gateway.vq.VirtualConsumer}) and leases their messages out on
 * the virtual broker ({@link io.rmqgw.gateway.vq.VirtualQueues}; {@link io.rmqgw.gateway.vq.VirtualBrokerHandlers}, one
 * handler per request family).
 * {@link io.rmqgw.gateway.vq.VirtualQueueGroup} is the state of one group on one topic: a window of messages per
 * owned real queue and the leases on virtual queues. Pure state driven by the wiring: no sockets, no timers, one
 * owning event loop. See docs/ARCHITECTURE.md, "Virtual queues: the window and leases".
 */
package io.rmqgw.gateway.vq;
