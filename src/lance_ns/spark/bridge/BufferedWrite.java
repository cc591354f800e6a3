package lancens.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

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
 *
 * <p>Spark 4.1 hands this writer {@code ReplaceData}'s rows as they are planned,
 * the operation code first ({@code WRITE}, or {@code WRITE_WITH_METADATA} with
 * the metadata columns after the data), where later releases hand it the data
 * alone: the data columns are taken from such a row.
 */
final class BufferedWrite implements Write {
  /** Spark's codes of a ReplaceData row that is written (RowDeltaUtils: WRITE, WRITE_WITH_METADATA). */
  private static final int WRITE = 5;
  private static final int WRITE_WITH_METADATA = 6;

  private final Write python;
  private final DataType[] types;

  BufferedWrite(Write python, StructType schema) {
    this.python = python;
    StructField[] fields = schema.fields();
    this.types = new DataType[fields.length];
    for (int i = 0; i < fields.length; i++) {
      types[i] = fields[i].dataType();
    }
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
        return new Factory(batch.createBatchWriterFactory(info), types);
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
    private final DataType[] types;

    Factory(DataWriterFactory python, DataType[] types) {
      this.python = python;
      this.types = types;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new Writer(python.createWriter(partitionId, taskId), types);
    }
  }

  private static final class Writer implements DataWriter<InternalRow> {
    private final DataWriter<InternalRow> python;
    private final DataType[] types;
    private final List<InternalRow> rows = new ArrayList<>();

    Writer(DataWriter<InternalRow> python, DataType[] types) {
      this.python = python;
      this.types = types;
    }

    @Override
    public void write(InternalRow row) {
      rows.add(row.numFields() == types.length ? row.copy() : data(row)); // (the task reuses its row object)
    }

    /** The data columns of a row planned as ReplaceData's (Spark 4.1): its operation code, then the data. */
    private InternalRow data(InternalRow row) {
      int operation = row.getInt(0);
      if (row.numFields() <= types.length || (operation != WRITE && operation != WRITE_WITH_METADATA)) {
        throw new IllegalStateException("a row of " + row.numFields() + " columns (operation " + operation
            + ") for a table of " + types.length);
      }
      InternalRow copy = row.copy();
      GenericInternalRow data = new GenericInternalRow(types.length);
      for (int i = 0; i < types.length; i++) {
        data.update(i, copy.isNullAt(i + 1) ? null : copy.get(i + 1, types[i]));
      }
      return data;
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
