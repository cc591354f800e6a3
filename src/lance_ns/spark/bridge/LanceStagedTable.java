package lancens.spark;

import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * A table of a CTAS or RTAS ({@link LanceCatalog#stageCreate} and the others): the job
 * writes through {@code written}'s write path, then Spark runs {@code commit} (the
 * namespace takes the job's commit and the table's entry in one step) or, when anything
 * failed, {@code abort} (the job's files deleted).  On Spark's non-atomic path the table
 * was created already: the commit has nothing left to do, the abort drops it.
 */
final class LanceStagedTable implements StagedTable, SupportsWrite {
  private final SupportsWrite written;
  private final Runnable commit;
  private final Runnable abort;

  LanceStagedTable(SupportsWrite written, Runnable commit, Runnable abort) {
    this.written = written;
    this.commit = commit;
    this.abort = abort;
  }

  @Override
  public String name() {
    return written.name();
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return written.schema();
  }

  @Override
  public Map<String, String> properties() {
    return written.properties();
  }

  @Override
  public Set<TableCapability> capabilities() {
    return written.capabilities();
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return written.newWriteBuilder(info);
  }

  @Override
  public void commitStagedChanges() {
    commit.run();
  }

  @Override
  public void abortStagedChanges() {
    abort.run();
  }
}
