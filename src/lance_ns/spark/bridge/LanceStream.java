package lancens.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A streaming read on the JVM path: offsets are table versions, and each micro-batch reads
 * the fragments added between two versions, as column batches from the bridge's workers
 * (the partitions a batch read's are).  The offsets and each micro-batch's plan are the
 * Python source's own stream reader's ({@code stream}), so every option (startingVersion,
 * ignoreChanges, filter, ...) means what it means there, and a commit that rewrote rows
 * fails the query with code 19 unless {@code ignoreChanges=true}.
 */
final class LanceStream implements MicroBatchStream {
  private final CaseInsensitiveStringMap options;
  private final StructType schema;

  LanceStream(CaseInsensitiveStringMap options, StructType schema) {
    this.options = options;
    this.schema = schema;
  }

  private Map<String, Object> call(String call, Version start, Version end) {
    Map<String, Object> request = new HashMap<>();
    request.put("op", "stream");
    request.put("call", call);
    request.put("options", options.asCaseSensitiveMap());
    request.put("schema", schema.json());
    if (start != null) {
      request.put("start", start.version);
      request.put("end", end.version);
    }
    return Workers.call(request);
  }

  @Override
  public Offset initialOffset() {
    return Version.of(call("initial", null, null));
  }

  @Override
  public Offset latestOffset() {
    return Version.of(call("latest", null, null));
  }

  @Override
  public Offset deserializeOffset(String json) {
    return Version.parse(json);
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    List<?> planned = (List<?>) call("partitions", (Version) start, (Version) end).get("partitions");
    InputPartition[] partitions = new InputPartition[planned.size()];
    for (int i = 0; i < partitions.length; i++) {
      partitions[i] = new LanceReaders.Partition((String) planned.get(i));
    }
    return partitions;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new LanceReaders.Factory();
  }

  @Override
  public void commit(Offset end) {} // nothing to release: each micro-batch reads a version as it is

  @Override
  public void stop() {}

  /** What a streaming query's progress and plan show of its source. */
  @Override
  public String toString() {
    return "LanceStream(" + options.getOrDefault("table", options.getOrDefault("path", "")) + ")";
  }

  /** A table version as a stream offset. */
  static final class Version extends Offset {
    final long version;

    Version(long version) {
      this.version = version;
    }

    static Version of(Map<String, Object> reply) {
      return new Version(((Number) reply.get("version")).longValue());
    }

    static Version parse(String json) {
      try {
        return new Version(Workers.JSON.readTree(json).get("version").asLong());
      } catch (IOException e) {
        throw new UncheckedIOException("not a lance stream offset: " + json, e);
      }
    }

    /**
     * Spelled as the Python source spells its offsets ({@code json.dumps}), since Spark
     * compares offsets by this text: a checkpoint either path wrote restarts on the other.
     */
    @Override
    public String json() {
      return "{\"version\": " + version + "}";
    }
  }
}
