package lancens.spark;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsDelete;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwrite;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.AlwaysTrue;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A table of {@link LanceCatalog}: reads on the JVM path (the scan of
 * {@link LanceProvider}: column pruning, filter pushdown, COUNT(*) from
 * metadata, statistics), writes through {@link LanceWrite} (every
 * DataFrameWriterV2 mode, {@link WriteModes}), DELETE as one Lance delete,
 * UPDATE and MERGE INTO as a group-based copy-on-write ({@link CopyOnWrite}).
 * {@code options} address the table for both paths (the catalog's namespace
 * configuration and the identifier, and a version for time travel); without
 * a version each query plans at the latest one.
 */
final class LanceCatalogTable
    implements SupportsRead, SupportsWrite, SupportsDelete, SupportsRowLevelOperations, SupportsMetadataColumns {
  private final LanceCatalog catalog;
  private final Identifier ident;
  private final StructType schema;
  private final Map<String, String> options;
  private final Map<String, String> properties;

  LanceCatalogTable(
      LanceCatalog catalog, Identifier ident, StructType schema, Map<String, String> options, Map<String, String> properties) {
    this.catalog = catalog;
    this.ident = ident;
    this.schema = schema;
    this.options = options;
    this.properties = properties;
  }

  @Override
  public String name() {
    return catalog.name() + "." + ident;
  }

  /** The name, where Spark's messages show the table (a refused overwrite's). */
  @Override
  public String toString() {
    return name();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  /**
   * {@code _rowaddr} (a row's address: its fragment's id in the high 32 bits, its offset in the
   * low) and {@code _fragid}, read when a query names them, as lance-spark's tables have them:
   * what ADD|UPDATE COLUMNS ... FROM matches rows by.
   */
  @Override
  public MetadataColumn[] metadataColumns() {
    return new MetadataColumn[] {
        new Metadata(LanceProcedure.ROW_ADDRESS, DataTypes.LongType), new Metadata("_fragid", DataTypes.IntegerType)};
  }

  private static final class Metadata implements MetadataColumn {
    private final String name;
    private final DataType type;

    Metadata(String name, DataType type) {
      this.name = name;
      this.type = type;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public DataType dataType() {
      return type;
    }

    @Override
    public boolean isNullable() {
      return false;
    }
  }

  /** Not the Python table's: it accepts any schema, which would skip Spark's by-name/position column matching. */
  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.OVERWRITE_DYNAMIC,
        TableCapability.MICRO_BATCH_READ,
        TableCapability.STREAMING_WRITE);
  }

  /** The table's options over the query's (the table's identity is not an option a query may change). */
  private CaseInsensitiveStringMap merged(CaseInsensitiveStringMap query) {
    Map<String, String> all = new HashMap<>(query.asCaseSensitiveMap());
    all.putAll(options);
    return new CaseInsensitiveStringMap(all);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap query) {
    return new LanceProvider.LanceScanBuilder(schema, null, merged(query));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new WriteModes(info);
  }

  /**
   * Append ({@link #build}), truncate (INSERT OVERWRITE, {@code overwrite(lit(true))}),
   * overwrite by a condition and dynamic partition overwrite, each one
   * commit of a {@link LanceWrite}.  The table is unpartitioned, so
   * its one partition is the whole table: {@code overwritePartitions()}
   * truncates, as Spark defines it for such a table.  A condition is
   * translated to Lance SQL here, at planning ({@link #canOverwrite}: Spark
   * refuses the write if any part does not translate, before anything is
   * written); the write then deletes the rows it matches and adds the new
   * ones in one commit ({@code replaceWhere}).
   */
  private final class WriteModes implements SupportsOverwrite, SupportsDynamicOverwrite {
    private final LogicalWriteInfo info;

    WriteModes(LogicalWriteInfo info) {
      this.info = info;
    }

    @Override
    public Write build() {
      return lanceWrite(info, Map.of()).build();
    }

    @Override
    public WriteBuilder truncate() {
      return lanceWrite(info, Map.of()).truncate();
    }

    @Override
    public WriteBuilder overwriteDynamicPartitions() {
      return truncate();
    }

    @Override
    public boolean canOverwrite(Filter[] filters) {
      return lanceSql(filters) != null;
    }

    @Override
    public WriteBuilder overwrite(Filter[] filters) {
      String sql = lanceSql(filters);
      if (sql == null) {
        throw new UnsupportedOperationException("cannot overwrite " + name() + " where " + List.of(filters));
      }
      if (sql.equals(ALL_ROWS)) {
        return truncate();
      }
      return lanceWrite(info, Map.of("replaceWhere", sql)).truncate();
    }
  }

  /**
   * The write of this table, with {@code extra} options over the table's and the query's:
   * a {@link LanceWrite}, in batch and in a stream.
   */
  private LanceWrite.Builder lanceWrite(LogicalWriteInfo info, Map<String, String> extra) {
    if (options.containsKey("version")) {
      throw new UnsupportedOperationException(
          "cannot write to " + name() + " at a fixed version (VERSION/TIMESTAMP AS OF)");
    }
    Map<String, String> all = new HashMap<>(merged(info.options()));
    all.putAll(extra);
    return new LanceWrite.Builder(all, info.schema());
  }

  // ------------------------------------------------------ UPDATE / MERGE INTO

  /**
   * UPDATE, MERGE INTO (and a DELETE whose condition Lance cannot take):
   * Spark's group-based row-level operation with one group, the table.  The
   * scan reads every row of the version this statement loaded, Spark
   * computes the table's new rows (unchanged rows included, MERGE's
   * cardinality check its own), and the write replaces that version's
   * fragments in one Lance commit; if any commit came after that version
   * the statement fails with ConcurrentModificationError (code 14) and
   * writes nothing, so no update is silently lost.
   */
  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    if (options.containsKey("version")) {
      throw new UnsupportedOperationException(
          "cannot change " + name() + " at a fixed version (VERSION/TIMESTAMP AS OF)");
    }
    long version = Long.parseLong(properties.get("lance.version"));
    return () -> new CopyOnWrite(info.command(), version);
  }

  private final class CopyOnWrite implements RowLevelOperation {
    private final Command command;
    private final long version;

    CopyOnWrite(Command command, long version) {
      this.command = command;
      this.version = version;
    }

    @Override
    public Command command() {
      return command;
    }

    @Override
    public String description() {
      return command + " of " + name() + " at version " + version + " (copy-on-write)";
    }

    /**
     * Every row at the version: no filter is taken (a group is the whole
     * table, and rows the condition does not match are written back).
     */
    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap query) {
      ScanBuilder all = new LanceProvider.LanceScanBuilder(schema, version, merged(query));
      return new ScanBuilder() {
        @Override
        public Scan build() {
          return all.build();
        }
      };
    }

    /** The overwrite replacing exactly the version read. */
    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      return lanceWrite(info, Map.of("replaceVersion", Long.toString(version))).truncate();
    }
  }

  // ---------------------------------------------------- conditions and DELETE

  /** The Lance SQL of the condition "every row" (no filter, or AlwaysTrue). */
  private static final String ALL_ROWS = "true";

  /**
   * The Lance SQL of the filters (a DELETE's or an overwrite's condition,
   * ANDed) when every one translates with Spark's semantics, else null:
   * Spark then refuses the statement or falls back (DELETE to copy-on-write).
   */
  private String lanceSql(Filter[] filters) {
    List<Object> encoded = new ArrayList<>();
    for (Filter f : filters) {
      if (f instanceof AlwaysTrue) {
        continue; // DELETE FROM t: every row
      }
      Object json = Filters.encode(f);
      if (json == null) {
        return null;
      }
      encoded.add(json);
    }
    if (encoded.isEmpty()) {
      return ALL_ROWS;
    }
    Map<String, Object> request = new HashMap<>();
    request.put("op", "filters");
    request.put("options", Map.of());
    request.put("filters", encoded);
    Map<String, Object> reply = Workers.call(request);
    return ((List<?>) reply.get("pushed")).size() == encoded.size() ? (String) reply.get("sql") : null;
  }

  @Override
  public boolean canDeleteWhere(Filter[] filters) {
    return !options.containsKey("version") && lanceSql(filters) != null;
  }

  @Override
  public void deleteWhere(Filter[] filters) {
    String sql = lanceSql(filters);
    if (sql == null) {
      throw new UnsupportedOperationException("cannot delete from " + name() + " where " + List.of(filters));
    }
    catalog.call("delete_where", "table", LanceCatalog.id(ident), "predicate", sql);
  }
}
