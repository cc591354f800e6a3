package lancens.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * A Python data source's batch write, fed by tasks that hand over one row at
 * a time: the row-level commands' {@code ReplaceData}.
 *
 * <p>Spark's Python writer ({@code PythonBatchWriterFactory}) works only
 * through {@code DataWriter.writeAll}, which runs the Python writer over the
 * partition's iterator; its {@code write(row)} drops the row (Spark 4.3), and
 * only plain appends and overwrites call {@code writeAll}.  So each task's
 * rows are kept (copied) until the task commits, then written in one
 * {@code writeAll}: a task holds its partition's rows in memory, the price
 * of the copy-on-write path.  Everything else is the Python write's.
 */
final class BufferedWrite implements Write {
  private final Write python;

  BufferedWrite(Write python) {
    this.python = python;
  }

  @Override
  public String description() {
    return python.description();
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return python.supportedCustomMetrics();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return python.reportDriverMetrics();
  }

  @Override
  public BatchWrite toBatch() {
    BatchWrite batch = python.toBatch();
    return new BatchWrite() {
      @Override
      public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new Factory(batch.createBatchWriterFactory(info));
      }

      @Override
      public boolean useCommitCoordinator() {
        return batch.useCommitCoordinator();
      }

      @Override
      public void onDataWriterCommit(WriterCommitMessage message) {
        batch.onDataWriterCommit(message);
      }

      @Override
      public void commit(WriterCommitMessage[] messages) {
        batch.commit(messages);
      }

      @Override
      public void commit(WriterCommitMessage[] messages, WriteSummary summary) {
        batch.commit(messages, summary);
      }

      @Override
      public void abort(WriterCommitMessage[] messages) {
        batch.abort(messages);
      }
    };
  }

  private static final class Factory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final DataWriterFactory python;

    Factory(DataWriterFactory python) {
      this.python = python;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new Writer(python.createWriter(partitionId, taskId));
    }
  }

  private static final class Writer implements DataWriter<InternalRow> {
    private final DataWriter<InternalRow> python;
    private final List<InternalRow> rows = new ArrayList<>();

    Writer(DataWriter<InternalRow> python) {
      this.python = python;
    }

    @Override
    public void write(InternalRow row) {
      rows.add(row.copy()); // the task reuses its row object
    }

    @Override
    public void writeAll(java.util.Iterator<InternalRow> records) throws IOException {
      while (records.hasNext()) {
        write(records.next());
      }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
      python.writeAll(rows.iterator());
      rows.clear();
      return python.commit();
    }

    @Override
    public void abort() throws IOException {
      rows.clear();
      python.abort();
    }

    @Override
    public void close() throws IOException {
      python.close();
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
      return python.currentMetricsValues();
    }
  }
}
