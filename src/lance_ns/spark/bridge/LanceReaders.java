package lancens.spark;

import java.io.IOException;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Partitions and their columnar readers. */
final class LanceReaders {
  private LanceReaders() {}

  /** One group of fragments at one version, as planned by Python (opaque JSON). */
  static final class Partition implements InputPartition {
    private static final long serialVersionUID = 1L;
    final String spec;

    Partition(String spec) {
      this.spec = spec;
    }
  }

  static final class Factory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
      return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      throw new UnsupportedOperationException("lance partitions are read as column batches");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
      return new ColumnarReader(((Partition) partition).spec);
    }
  }

  /**
   * Reads one partition's Arrow stream from a worker.  A fully read stream
   * gives the worker back to the pool; a reader closed early (LIMIT, a
   * failed task) stops the worker instead, since its pipe holds unread data.
   */
  static final class ColumnarReader implements PartitionReader<ColumnarBatch> {
    private final Workers.Worker worker;
    private final BufferAllocator allocator = new RootAllocator(Long.MAX_VALUE);
    private final ArrowStreamReader stream;
    private ColumnarBatch batch;
    private boolean finished; // the trailer was read: the worker is ready for another request
    private long columnlessRows; // rows still to emit for a read of no column (count(*))

    ColumnarReader(String spec) {
      worker = Workers.borrow();
      try {
        worker.send(Map.of("op", "read", "partition", spec));
        worker.reply(); // the worker checked the partition and will stream it
        stream = new ArrowStreamReader(worker.body(), allocator);
      } catch (RuntimeException | IOException e) {
        Workers.discard(worker);
        allocator.close();
        throw Workers.unchecked(e);
      }
    }

    @Override
    public boolean next() throws IOException {
      try {
        if (!finished && stream.loadNextBatch()) {
          VectorSchemaRoot root = stream.getVectorSchemaRoot();
          ColumnVector[] columns = new ColumnVector[root.getFieldVectors().size()];
          int i = 0;
          for (FieldVector v : root.getFieldVectors()) {
            columns[i++] = new ArrowColumnVector(v);
          }
          batch = new ColumnarBatch(columns, root.getRowCount());
          return true;
        }
        if (!finished) {
          Map<String, Object> trailer = worker.reply(); // raises the worker's error, if any
          finished = true;
          Object rows = trailer.get("rows");
          if (rows != null && stream.getVectorSchemaRoot().getFieldVectors().isEmpty()) {
            columnlessRows = ((Number) rows).longValue();
          }
        }
        if (columnlessRows > 0) {
          int n = (int) Math.min(columnlessRows, 1 << 20);
          columnlessRows -= n;
          batch = new ColumnarBatch(new ColumnVector[0], n);
          return true;
        }
        return false;
      } catch (RuntimeException | IOException e) {
        Workers.discard(worker);
        finished = false;
        throw Workers.unchecked(e);
      }
    }

    @Override
    public ColumnarBatch get() {
      return batch;
    }

    @Override
    public void close() throws IOException {
      try {
        stream.close(false);
      } finally {
        allocator.close();
        if (finished) {
          Workers.release(worker);
        } else {
          Workers.discard(worker);
        }
      }
    }
  }
}
