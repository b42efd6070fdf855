#!/usr/bin/env bash
# Counts the main-code source files and packages one request runs through inside the gateway (default settings,
# warmed-up connection): SEND_MESSAGE_V2 and PULL_MESSAGE on a broker port, GET_ROUTEINFO_BY_TOPIC on the
# name-server port, each with a ROCKETMQ (binary) and a JSON header. Runs gateway's RequestTraceTest under the
# JaCoCo agent (output=none; the test resets and dumps the probes around each request), then
# bench/trace/TraceReport.java counts the dumps. See RequestTraceTest for what exactly is measured.
#
#   bench/trace-requests.sh [--no-build] [-- extra maven args]
#
# Environment: MAVEN_REPO (default ~/.m2/repository), MVN_FLAGS (default -o: the JaCoCo 0.8.15 artifacts must be
# in the local repository; fetch them once with
#   mvn dependency:get -Dartifact=org.jacoco:org.jacoco.agent:0.8.15:jar:runtime
#   mvn dependency:get -Dartifact=org.jacoco:org.jacoco.core:0.8.15 ).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REPO="${MAVEN_REPO:-$HOME/.m2/repository}"
MVN_FLAGS="${MVN_FLAGS:--o}"
JACOCO=0.8.15
ASM=9.10.1
BUILD=1
if [[ "${1:-}" == "--no-build" ]]; then BUILD=0; shift; fi
if [[ "${1:-}" == "--" ]]; then shift; fi

AGENT="$REPO/org/jacoco/org.jacoco.agent/$JACOCO/org.jacoco.agent-$JACOCO-runtime.jar"
CORE="$REPO/org/jacoco/org.jacoco.core/$JACOCO/org.jacoco.core-$JACOCO.jar"
ASMJAR="$REPO/org/ow2/asm/asm/$ASM/asm-$ASM.jar"
for jar in "$AGENT" "$CORE" "$ASMJAR"; do
  [[ -f "$jar" ]] || { echo "missing $jar (see the header of $0)" >&2; exit 2; }
done

OUT="$ROOT/gateway/target/trace"
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT"
if [[ "$BUILD" == 1 ]]; then
  mvn -B -q $MVN_FLAGS -Dmaven.repo.local="$REPO" install -DskipTests -pl gateway -am
fi
# includes: only the project's classes get probes; leak detection at Netty's default (SIMPLE), as in production
mvn -B $MVN_FLAGS -Dmaven.repo.local="$REPO" -pl gateway test -Dtest=RequestTraceTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Drmqgw.trace=1 -Drmqgw.trace.dir="$OUT" \
  "-Dleak.argLine=-javaagent:$AGENT=output=none,includes=io.rmqgw.* -Dio.netty.leakDetection.level=simple" \
  "$@" > "$OUT/maven.log" 2>&1 || { tail -60 "$OUT/maven.log" >&2; exit 1; }
grep -q "Tests run: 1, Failures: 0, Errors: 0, Skipped: 0" "$OUT/maven.log" \
  || { echo "RequestTraceTest did not run (see $OUT/maven.log)" >&2; exit 1; }

echo "# $(git -C "$ROOT" log -1 --format='%h %s' | cut -c1-100)"
java -cp "$CORE:$ASMJAR" "$ROOT/bench/trace/TraceReport.java" "$OUT" \
  codec="$ROOT/codec/target/classes" routing="$ROOT/routing/target/classes" \
  metrics="$ROOT/metrics/target/classes" gateway="$ROOT/gateway/target/classes"
