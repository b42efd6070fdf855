#!/usr/bin/env bash
# Load comparison: the same workload directly against Apache RocketMQ 5.4.0, through rmqgw, and through
# Apache RocketMQ's proxy 5.4.0 (cluster mode, remoting port), in turn; medians and ratios at the end.
#
#   mvn -q -B install -DskipTests && mvn -q -B -f bench/pom.xml package     # build once
#   bench/compare.sh                                  # 20 s per run, 3 rounds, everything
#   bench/compare.sh --duration 60s --rounds 5 --out /tmp/bench-run
#   bench/compare.sh --only broker-effect            # issue 3: rocketmq vs preserve, broker CPU
#   bench/compare.sh --only soak                     # 10 min soak of one gateway: memory growth, Netty leak reports
#   bench/compare.sh --help
#
# Everything it starts (name server, broker, proxy, gateways, load generators) runs in a private network
# namespace holding only a loopback interface (unshare -n) when the kernel lets us create one, so nothing
# is reachable from outside even where a server binds the wildcard address (the proxy has no bind option,
# the broker's HA port binds 0.0.0.0); everything is also configured for 127.0.0.1. RMQGW_BENCH_NETNS=0
# runs in the host's namespace instead. Every process is started under `timeout` (--max-runtime) and
# stopped at the end, on Ctrl-C and on SIGTERM.
#
# Needs: bash, Java 17 (java, jcmd, jfr), Python 3.8+, coreutils `timeout`; unshare and ip for the namespace.
set -euo pipefail

here="$(cd -P "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

for a in "$@"; do
  if [ "$a" = "-h" ] || [ "$a" = "--help" ]; then
    exec python3 "$here/compare.py" --help
  fi
done

home="${RMQGW_HOME:-$root}"
missing=()
compgen -G "$home/cli/target/rmqgw-cli-*.jar" >/dev/null || missing+=("$home/cli/target/rmqgw-cli-*.jar")
[ -f "$here/servers/target/servers.classpath" ] || missing+=("$here/servers/target/servers.classpath")
[ -f "$here/client-4.9.7/target/client.classpath" ] || missing+=("$here/client-4.9.7/target/client.classpath")
if [ "${#missing[@]}" -gt 0 ]; then
  echo "compare.sh: build first (missing: ${missing[*]}):" >&2
  echo "  (cd $home && mvn -q -B install -DskipTests) && (cd $root && mvn -q -B -f bench/pom.xml package)" >&2
  exit 2
fi

if [ "${RMQGW_BENCH_NETNS:-1}" = "1" ] && [ -z "${RMQGW_BENCH_IN_NETNS:-}" ] && command -v unshare >/dev/null 2>&1; then
  for flags in "-n" "-rn"; do
    if unshare $flags true 2>/dev/null; then
      export RMQGW_BENCH_IN_NETNS=1
      exec unshare $flags bash -c 'ip link set lo up 2>/dev/null || true; exec "$@"' compare "$0" "$@"
    fi
  done
  echo "compare.sh: cannot create a network namespace (unshare -n); running in the host's, servers bind 127.0.0.1" >&2
fi

exec python3 "$here/compare.py" --rmqgw-home "$home" "$@"
