package lancens.spark;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsDelete;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.sources.AlwaysTrue;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A table of {@link LanceCatalog}: reads on the JVM path (the scan of
 * {@link LanceProvider}: column pruning, filter pushdown, COUNT(*) from
 * metadata, statistics), writes through the Python source, DELETE as one
 * Lance delete.  {@code options} address the table for both paths (the
 * catalog's namespace configuration and the identifier, and a version for
 * time travel); without a version each query plans at the latest one.
 */
final class LanceCatalogTable implements SupportsRead, SupportsWrite, SupportsDelete {
  private final LanceCatalog catalog;
  private final Identifier ident;
  private final StructType schema;
  private final Map<String, String> options;
  private final Map<String, String> properties;
  private final PythonDataSourceV2 source = new PythonDataSourceV2();
  private final Table python;

  LanceCatalogTable(
      LanceCatalog catalog, Identifier ident, StructType schema, Map<String, String> options, Map<String, String> properties) {
    this.catalog = catalog;
    this.ident = ident;
    this.schema = schema;
    this.options = options;
    this.properties = properties;
    source.setShortName(LanceProvider.PYTHON_SOURCE);
    python = source.getTable(schema, new Transform[0], options);
  }

  @Override
  public String name() {
    return catalog.name() + "." + ident;
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  /** Not the Python table's: it accepts any schema, which would skip Spark's by-name/position column matching. */
  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
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
    return new LanceProvider.LanceScanBuilder(schema, null, merged(query), source, (SupportsRead) python);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (options.containsKey("version")) {
      throw new UnsupportedOperationException(
          "cannot write to " + name() + " at a fixed version (VERSION/TIMESTAMP AS OF)");
    }
    LanceProvider.requireRegistered(source);
    CaseInsensitiveStringMap writeOptions = merged(info.options());
    return ((SupportsWrite) python).newWriteBuilder(new LogicalWriteInfo() {
      @Override
      public CaseInsensitiveStringMap options() {
        return writeOptions;
      }

      @Override
      public String queryId() {
        return info.queryId();
      }

      @Override
      public StructType schema() {
        return info.schema();
      }

      @Override
      public Optional<StructType> rowIdSchema() {
        return info.rowIdSchema();
      }

      @Override
      public Optional<StructType> metadataSchema() {
        return info.metadataSchema();
      }
    });
  }

  // ------------------------------------------------------------------- DELETE

  /**
   * The Lance SQL of the filters when every one translates with Spark's
   * semantics (else null: Spark then refuses the DELETE); no filter at all
   * deletes every row.
   */
  private String deleteSql(Filter[] filters) {
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
      return "true";
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
    return !options.containsKey("version") && deleteSql(filters) != null;
  }

  @Override
  public void deleteWhere(Filter[] filters) {
    String sql = deleteSql(filters);
    if (sql == null) {
      throw new UnsupportedOperationException("cannot delete from " + name() + " where " + List.of(filters));
    }
    catalog.call("delete_where", "table", LanceCatalog.id(ident), "predicate", sql);
  }
}
