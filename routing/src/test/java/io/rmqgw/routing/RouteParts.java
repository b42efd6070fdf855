package io.rmqgw.routing;

import org.apache.rocketmq.remoting.protocol.route.QueueData;

/** Route parts for tests, built with RocketMQ's own classes as name servers build them. */
final class RouteParts {

    private RouteParts() {
    }

    static QueueData queue(String brokerName, int read, int write, int perm) {
        QueueData q = new QueueData();
        q.setBrokerName(brokerName);
        q.setReadQueueNums(read);
        q.setWriteQueueNums(write);
        q.setPerm(perm);
        return q;
    }
}
