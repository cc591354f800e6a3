package lancens.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * A write through the bridge's own workers ({@link Workers}), where Spark's
 * Python data source would start three kinds of Python worker (one to plan, one
 * per task, one to commit) and pickle the writer for each.
 *
 * <ul>
 *   <li>Planning: the driver's worker makes the Python source's writer for these
 *       options and this schema ({@code write_plan}), so every option means what it
 *       means on the Python path; it comes back pickled, opaque to the JVM.
 *   <li>Each task turns its rows into Arrow batches with Spark's own
 *       {@link ArrowWriter} (the conversion Spark's Arrow Python path makes) and
 *       streams them to a worker of its executor, which writes Lance fragments as
 *       the batches arrive and answers with their metadata ({@code write}).
 *   <li>The driver's worker makes the one Lance commit of every task's fragments
 *       ({@code write_commit}; the namespace records it for a managed table), or
 *       deletes what the tasks wrote ({@code write_abort}).
 * </ul>
 *
 * A streaming write is the same, once per micro-batch: its plan is the Python
 * source's stream writer, and each batch's commit carries the batch (epoch) id, so
 * that a batch replayed after a restart is not committed twice (its files deleted).
 */
final class LanceWrite implements Write {
  /** Append, or overwrite after {@link #truncate}. */
  static final class Builder implements SupportsTruncate {
    private final Map<String, String> options;
    private final StructType schema;
    private boolean overwrite;

    Builder(Map<String, String> options, StructType schema) {
      this.options = options;
      this.schema = schema;
    }

    @Override
    public WriteBuilder truncate() {
      overwrite = true;
      return this;
    }

    @Override
    public Write build() {
      return new LanceWrite(options, schema, overwrite);
    }
  }

  private final Map<String, String> options;
  private final StructType schema;
  private final boolean overwrite;

  private LanceWrite(Map<String, String> options, StructType schema, boolean overwrite) {
    this.options = options;
    this.schema = schema;
    this.overwrite = overwrite;
  }

  @Override
  public String description() {
    return (overwrite ? "overwrite" : "append") + " of lance table " + options.getOrDefault("table", options.get("path"));
  }

  /** What EXPLAIN shows of the write. */
  @Override
  public String toString() {
    return "LanceWrite(" + description() + ")";
  }

  @Override
  public BatchWrite toBatch() {
    return new Batch(plan(false));
  }

  @Override
  public StreamingWrite toStreaming() {
    return new Stream(plan(true), description());
  }

  /** The driver's worker plans the write ({@code write_plan}): the tasks' factory. */
  private Factory plan(boolean stream) {
    Map<String, Object> request = new HashMap<>();
    request.put("op", "write_plan");
    request.put("options", options);
    request.put("schema", schema.json());
    request.put("overwrite", overwrite);
    request.put("stream", stream);
    String writer = (String) Workers.call(request).get("writer");
    SQLConf conf = SQLConf.get();
    int perBatch = conf.arrowMaxRecordsPerBatch();
    return new Factory(writer, schema, conf.sessionLocalTimeZone(), perBatch > 0 ? perBatch : Integer.MAX_VALUE);
  }

  /**
   * A commit or abort request: the writer, each task's fragments (null: a task that sent
   * none) and, for a stream, the micro-batch's id.
   */
  private static Map<String, Object> finish(String op, Factory job, WriterCommitMessage[] messages, Long epoch) {
    List<Object> written = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      written.add(m instanceof Written ? ((Written) m).fragments : null);
    }
    Map<String, Object> request = new HashMap<>();
    request.put("op", op);
    request.put("writer", job.writer);
    request.put("messages", written);
    if (epoch != null) {
      request.put("epoch", epoch);
    }
    return request;
  }

  /** What a task wrote: its fragments' metadata (Lance's JSON), none for a task without rows. */
  static final class Written implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final List<String> fragments;

    Written(List<String> fragments) {
      this.fragments = fragments;
    }
  }

  /** The job on the driver: its tasks' factory (the planned write), then its commit or abort. */
  private static final class Batch implements BatchWrite {
    private final Factory job;

    Batch(Factory job) {
      this.job = job;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return job;
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      Workers.call(finish("write_commit", job, messages, null));
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      Workers.call(finish("write_abort", job, messages, null));
    }
  }

  /**
   * A streaming query's sink: each micro-batch's tasks as a batch's, then the batch's one
   * commit (or abort) with its epoch id.
   */
  private static final class Stream implements StreamingWrite {
    private final Factory job;
    private final String description;

    Stream(Factory job, String description) {
      this.job = job;
      this.description = description;
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
      return job;
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
      Workers.call(finish("write_commit", job, messages, epochId));
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
      Workers.call(finish("write_abort", job, messages, epochId));
    }

    /** What a streaming query's plan shows of its sink. */
    @Override
    public String toString() {
      return "LanceWrite(stream " + description + ")";
    }
  }

  /** What each task needs of the planned write: the pickled writer, the rows' schema, how to batch them. */
  private static final class Factory implements DataWriterFactory, StreamingDataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final String writer;
    private final StructType schema;
    private final String timeZone;
    private final int perBatch;

    Factory(String writer, StructType schema, String timeZone, int perBatch) {
      this.writer = writer;
      this.schema = schema;
      this.timeZone = timeZone;
      this.perBatch = perBatch;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new TaskWriter(this);
    }

    /** A micro-batch's task: written as a batch's (the epoch is the commit's, on the driver). */
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
      return new TaskWriter(this);
    }
  }

  /**
   * One task's rows, streamed to a worker in Arrow batches of {@code perBatch} rows
   * (Spark's {@code spark.sql.execution.arrow.maxRecordsPerBatch}) as they come: the
   * worker encodes one batch while the task converts the next.  The worker is
   * taken at the first row, so a task without rows costs nothing.
   */
  private static final class TaskWriter implements DataWriter<InternalRow> {
    /** Spark's codes of a ReplaceData row that is written (RowDeltaUtils: WRITE, WRITE_WITH_METADATA). */
    private static final int WRITE = 5;
    private static final int WRITE_WITH_METADATA = 6;

    private final Factory job;
    private final DataType[] types;
    private Workers.Worker worker;
    private ArrowWriter arrow;
    private ArrowStreamWriter stream;
    private int pending;

    TaskWriter(Factory job) {
      this.job = job;
      this.types = new DataType[job.schema.fields().length];
      for (int i = 0; i < types.length; i++) {
        types[i] = job.schema.fields()[i].dataType();
      }
    }

    @Override
    public void write(InternalRow row) throws IOException {
      if (worker == null) {
        start();
      }
      arrow.write(row.numFields() == types.length ? row : data(row));
      if (++pending == job.perBatch) {
        flush();
      }
    }

    /** The data columns of a row planned as ReplaceData's (Spark 4.1): its operation code, then the data. */
    private InternalRow data(InternalRow row) {
      int operation = row.getInt(0);
      if (row.numFields() <= types.length || (operation != WRITE && operation != WRITE_WITH_METADATA)) {
        throw new IllegalStateException("a row of " + row.numFields() + " columns (operation " + operation
            + ") for a table of " + types.length);
      }
      GenericInternalRow data = new GenericInternalRow(types.length);
      for (int i = 0; i < types.length; i++) {
        data.update(i, row.isNullAt(i + 1) ? null : row.get(i + 1, types[i]));
      }
      return data;
    }

    private void start() throws IOException {
      worker = Workers.borrow();
      try {
        Map<String, Object> request = new HashMap<>();
        request.put("op", "write");
        request.put("writer", job.writer);
        worker.send(request);
        arrow = ArrowWriter.create(job.schema, job.timeZone, true, false);
        stream = new ArrowStreamWriter(arrow.root(), null, worker.sink());
        stream.start();
      } catch (IOException | RuntimeException e) {
        lose();
        throw e;
      }
    }

    private void flush() throws IOException {
      arrow.finish();
      try {
        stream.writeBatch();
      } catch (IOException | RuntimeException e) {
        lose(); // the worker went away mid-stream
        throw e;
      }
      arrow.reset();
      pending = 0;
    }

    /** The end of the stream, and the worker's answer: the fragments it wrote. */
    private List<String> end() throws IOException {
      if (pending > 0) {
        flush();
      }
      Workers.Worker w = worker;
      worker = null;
      try {
        stream.end();
        w.flush();
        Map<String, Object> reply = w.reply();
        Workers.release(w);
        @SuppressWarnings("unchecked")
        List<String> fragments = (List<String>) reply.get("fragments");
        return fragments;
      } catch (Workers.WorkerError e) {
        Workers.release(w); // it answered: still in step
        throw e;
      } catch (IOException | RuntimeException e) {
        Workers.discard(w);
        throw e;
      }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
      return new Written(worker == null ? List.of() : end());
    }

    /**
     * The task failed before its commit: the stream is ended so the worker stays in
     * step, and what it wrote is deleted (the job's abort finds only committed
     * tasks' files in its messages).
     */
    @Override
    public void abort() throws IOException {
      if (worker == null) {
        return;
      }
      List<String> fragments = end();
      if (!fragments.isEmpty()) {
        Map<String, Object> request = new HashMap<>();
        request.put("op", "write_discard");
        request.put("writer", job.writer);
        request.put("messages", List.of(fragments));
        Workers.call(request);
      }
    }

    private void lose() {
      if (worker != null) {
        Workers.discard(worker);
        worker = null;
      }
    }

    @Override
    public void close() {
      lose();
      if (arrow != null) {
        arrow.root().close();
        arrow = null;
      }
    }
  }
}
