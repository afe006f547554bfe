# The nvmeof-java target daemon in a container (docs/deploy.md).
#   docker build -t nvmeof-target .
#   docker run --rm -p 4420:4420 nvmeof-target --listen tcp://0.0.0.0:4420 --namespace size=1G
# Metrics from outside the container: add -p 9464:9464 and --metrics 0.0.0.0:9464 --metrics-allow-remote.

# Stage 1: build the daemon and its runtime jars with Maven (tests are run by CI, not here).
FROM maven:3.9-eclipse-temurin-17 AS build
# gcc builds libnvmeoffile.so, which punches holes in file-backed namespaces on deallocate.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN mvn -B -q -pl nvmeof-target -am package -DskipTests -Dspotless.check.skip=true

# Stage 2: a JRE and the jars; the daemon is the entry point, the default flags the command.
FROM eclipse-temurin:17-jre
COPY --from=build /src/nvmeof-target/build/nvmeof-target-*.jar /opt/nvmeof-target/
COPY --from=build /src/nvmeof-target/build/lib/ /opt/nvmeof-target/lib/
# NVMe/TCP and the (opt-in) metrics endpoint.
EXPOSE 4420 9464
# The same JVM options as bin/nvmeof-target (bin/lib.sh); JAVA_OPTS adds more (e.g. -Xmx or -XX:MaxDirectMemorySize:
# namespaces live off-heap, so give the container's memory limit room above --memory-budget).
ENV JAVA_OPTS=""
ENTRYPOINT ["sh", "-c", "exec java -Xms256m -Xmx1g -XX:+UseG1GC --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dio.netty.leakDetection.level=disabled -Dio.netty.recycler.chunkSize=256 -Dio.netty.allocator.maxCachedBufferCapacity=65536 $JAVA_OPTS -cp '/opt/nvmeof-target/*:/opt/nvmeof-target/lib/*' io.nvmeof.target.daemon.TargetDaemon \"$@\"", "nvmeof-target"]
CMD ["--listen", "tcp://0.0.0.0:4420", "--namespace", "size=1G"]
