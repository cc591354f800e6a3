package lancens.spark;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.internal.connector.PredicateUtils$;
import scala.Option;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;

/**
 * The JVM side of the {@code lance} format: batch reads hand Spark whole
 * Arrow column batches, the way its own parquet reader does.
 *
 * <p>Spark 4's Python data sources give the JVM rows (their partition reader
 * has no columnar mode), which caps a one-column aggregate near parquet's
 * speed.  Here planning and scanning still happen in Python, in long-lived
 * {@code lance_ns.spark.bridge_worker} processes (see {@link Workers}), but
 * batches cross as an Arrow IPC stream and reach Spark as
 * {@code ArrowColumnVector}s.  The scan is also told which columns a query
 * needs, which Python sources never are.
 *
 * <p>Streaming reads take the same partitions ({@link LanceStream}), and writes,
 * batch and streaming, are {@link LanceWrite}'s: no read or write of the format
 * starts Spark's own Python workers.  The Python source stays registered as
 * {@code lance_python}, for a session without the jar or to compare.
 */
public class LanceProvider implements TableProvider, DataSourceRegister {
  /**
   * Called by {@code lance_ns.spark.register}: the driver's Python, used by
   * this JVM's workers when neither spark.pyspark.python nor PYSPARK_PYTHON
   * names one.
   */
  public static void useDriverPython(String executable) {
    Workers.driverPython = executable;
  }

  /**
   * The table version the last {@link #inferSchema} described (null with
   * readLatest): Spark calls inferSchema and then getTable on one provider
   * instance, and the table's scans plan at this version, so a query's
   * schema and data agree even when a writer commits in between.
   */
  private Long pinnedVersion;

  @Override
  public String shortName() {
    return "lance";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    Map<String, Object> request = new HashMap<>();
    request.put("op", "schema");
    request.put("options", options.asCaseSensitiveMap());
    Map<String, Object> reply = Workers.call(request);
    Object version = reply.get("version");
    pinnedVersion = version == null ? null : ((Number) version).longValue();
    return (StructType) DataType.fromJson((String) reply.get("schema"));
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true; // a user schema selects columns, and writes take the DataFrame's
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    Long version = pinnedVersion;
    pinnedVersion = null;
    return new LanceTable(schema, version);
  }

  /** Reads and writes, batch and streaming, all on this path. */
  static final class LanceTable implements SupportsRead, SupportsWrite {
    private final StructType schema;
    private final Long version;

    LanceTable(StructType schema, Long version) {
      this.schema = schema;
      this.version = version;
    }

    @Override
    public String name() {
      return "lance";
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
          TableCapability.MICRO_BATCH_READ, TableCapability.STREAMING_WRITE);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new LanceScanBuilder(schema, version, options);
    }

    /** Writes, batch and streaming, through the bridge's workers ({@link LanceWrite}). */
    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      return new LanceWrite.Builder(new HashMap<>(info.options()), info.schema());
    }
  }

  /** The metadata columns a catalog table offers (LanceCatalogTable), read by name. */
  static final java.util.Set<String> METADATA_COLUMNS = java.util.Set.of("_rowaddr", "_fragid");

  static final class LanceScanBuilder
      implements SupportsPushDownV2Filters, SupportsPushDownRequiredColumns, SupportsPushDownAggregates {
    private final StructType schema;
    private final Long version;
    private final CaseInsensitiveStringMap options;
    private StructType readSchema;
    private Predicate[] pushed = new Predicate[0];
    private String filterSql;
    /** A lance_match/lance_match_phrase predicate, answered by the full-text index (LanceMatch). */
    private Map<String, Object> fullText;
    private int countStars; // COUNT(*)s answered from metadata (0: a scan)

    LanceScanBuilder(StructType schema, Long version, CaseInsensitiveStringMap options) {
      this.schema = schema;
      this.version = version;
      this.readSchema = schema;
      this.options = options;
    }

    /**
     * A full-text predicate ({@link LanceMatch}) is the scan's to answer, with the table's
     * index; every other predicate Spark can write as a filter is offered to Python, which
     * turns the ones with exactly Spark's semantics into one Lance SQL filter.  Those are also
     * returned to Spark, which checks them again on the (already smaller) output: a pushed
     * filter can only save work, never change a result.  Python also decides, from the
     * options, whether to push at all.
     */
    @Override
    public Predicate[] pushPredicates(Predicate[] predicates) {
      List<Predicate> kept = new ArrayList<>();
      List<Predicate> taken = new ArrayList<>();
      List<Object> encoded = new ArrayList<>();
      List<Predicate> offered = new ArrayList<>();
      for (Predicate p : predicates) {
        Map<String, Object> match = fullText == null ? LanceMatch.fullText(p) : null;
        if (match != null) {
          fullText = match;
          taken.add(p);
          continue;
        }
        kept.add(p);
        Option<Filter> v1 = PredicateUtils$.MODULE$.toV1(p);
        Object json = v1.isDefined() ? Filters.encode(v1.get()) : null;
        if (json != null) {
          encoded.add(json);
          offered.add(p);
        }
      }
      if (!encoded.isEmpty()) {
        Map<String, Object> request = new HashMap<>();
        request.put("op", "filters");
        request.put("options", options.asCaseSensitiveMap());
        request.put("filters", encoded);
        Map<String, Object> reply = Workers.call(request);
        filterSql = (String) reply.get("sql");
        for (Object i : (List<?>) reply.get("pushed")) {
          taken.add(offered.get(((Number) i).intValue()));
        }
      }
      pushed = taken.toArray(new Predicate[0]);
      return kept.toArray(new Predicate[0]);
    }

    @Override
    public Predicate[] pushedPredicates() {
      return pushed;
    }

    /** Keeps the table's top-level columns the query needs, whole. */
    @Override
    public void pruneColumns(StructType required) {
      if (countStars > 0) {
        return; // the scan answers the pushed COUNT(*)s
      }
      List<StructField> kept = new ArrayList<>();
      for (StructField f : schema.fields()) {
        if (required.getFieldIndex(f.name()).isDefined()) {
          kept.add(f);
        }
      }
      for (StructField f : required.fields()) { // a catalog table's metadata columns (_rowaddr, _fragid)
        if (METADATA_COLUMNS.contains(f.name()) && !schema.getFieldIndex(f.name()).isDefined()) {
          kept.add(f);
        }
      }
      readSchema = new StructType(kept.toArray(new StructField[0]));
    }

    /**
     * COUNT(*) without GROUP BY or filter (Spark offers it only when no
     * filter stays above the scan) is the live row count of the version's
     * fragments, from the manifest, answered at planning ({@link LanceCount}):
     * no column is read and no task runs.
     */
    @Override
    public boolean pushAggregation(Aggregation aggregation) {
      if (aggregation.groupByExpressions().length > 0 || filterSql != null || fullText != null
          || options.containsKey("filter")) {
        return false;
      }
      for (AggregateFunc f : aggregation.aggregateExpressions()) {
        if (!(f instanceof CountStar)) {
          return false;
        }
      }
      countStars = aggregation.aggregateExpressions().length;
      StructField[] fields = new StructField[countStars];
      for (int i = 0; i < countStars; i++) {
        fields[i] = DataTypes.createStructField("count(*)" + i, DataTypes.LongType, false);
      }
      readSchema = new StructType(fields);
      return true;
    }

    @Override
    public Scan build() {
      if (countStars > 0) {
        return new LanceCount(readSchema, version, options, countStars);
      }
      return new LanceScan(readSchema, version, options, filterSql, fullText);
    }
  }

  /** The plan request of a scan: what Python's bridge worker plans it from ({@code op: plan}). */
  static Map<String, Object> planRequest(
      CaseInsensitiveStringMap options, StructType schema, String filterSql, Map<String, Object> fullText, Long version) {
    Map<String, Object> request = new HashMap<>();
    request.put("op", "plan");
    request.put("options", options.asCaseSensitiveMap());
    request.put("schema", schema.json());
    request.put("filter", filterSql);
    request.put("full_text", fullText);
    request.put("version", version);
    return request;
  }

  /**
   * Pushed COUNT(*)s: one row, each column the live row count of the version the query reads,
   * from its fragments' metadata.  A {@link LocalScan}: Spark answers the query from this row
   * at planning (a LocalTableScan), as lance-spark does, where a scan would start a task.
   */
  static final class LanceCount implements LocalScan {
    private final StructType readSchema;
    private final Long version;
    private final CaseInsensitiveStringMap options;
    private final int countStars;

    LanceCount(StructType readSchema, Long version, CaseInsensitiveStringMap options, int countStars) {
      this.readSchema = readSchema;
      this.version = version;
      this.options = options;
      this.countStars = countStars;
    }

    @Override
    public StructType readSchema() {
      return readSchema;
    }

    @Override
    public String description() {
      return "lance " + options.getOrDefault("path", "") + " count(*) from metadata";
    }

    @Override
    public InternalRow[] rows() {
      Map<String, Object> reply;
      try {
        reply = Workers.call(planRequest(options, new StructType(), null, null, version));
      } catch (Workers.WorkerError e) { // what the query asks of the table, refused at planning
        throw LanceSqlExtensions.analysisError(description() + ": " + e.getMessage(), e);
      }
      Object[] counts = new Object[countStars];
      java.util.Arrays.fill(counts, ((Number) reply.get("rows")).longValue());
      return new InternalRow[] {new GenericInternalRow(counts)};
    }
  }

  static final class LanceScan implements Scan, Batch, SupportsReportStatistics {
    private final StructType readSchema;
    private final Long version;
    private final CaseInsensitiveStringMap options;
    private final String filterSql;
    private final Map<String, Object> fullText;
    private InputPartition[] partitions;
    private long rows;
    private long bytes;

    LanceScan(
        StructType readSchema,
        Long version,
        CaseInsensitiveStringMap options,
        String filterSql,
        Map<String, Object> fullText) {
      this.fullText = fullText;
      this.readSchema = readSchema;
      this.version = version;
      this.options = options;
      this.filterSql = filterSql;
    }

    @Override
    public StructType readSchema() {
      return readSchema;
    }

    @Override
    public String description() {
      return "lance " + options.getOrDefault("path", "") + (filterSql == null ? "" : " filter=" + filterSql)
          + (fullText == null ? "" : " fullText=" + fullText);
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    /**
     * Planned once per scan, at the version the schema was read at, or (a
     * user schema, or readLatest) at the one the options select now.
     */
    @Override
    public synchronized InputPartition[] planInputPartitions() {
      if (partitions == null) {
        Map<String, Object> reply;
        try {
          reply = Workers.call(planRequest(options, readSchema, filterSql, fullText, version));
        } catch (Workers.WorkerError e) { // what the query asks of the table, refused before any task
          throw LanceSqlExtensions.analysisError(description() + ": " + e.getMessage(), e);
        }
        rows = ((Number) reply.get("rows")).longValue();
        bytes = ((Number) reply.get("bytes")).longValue();
        List<?> planned = (List<?>) reply.get("partitions");
        partitions = new InputPartition[planned.size()];
        for (int i = 0; i < partitions.length; i++) {
          partitions[i] = new LanceReaders.Partition((String) planned.get(i));
        }
      }
      return partitions;
    }

    /**
     * Rows and bytes of the planned read (before filters), so Spark can
     * broadcast a small table in a join; without them it assumes any
     * table is too big to.  Plans the scan, which execution then reuses.
     */
    @Override
    public Statistics estimateStatistics() {
      planInputPartitions();
      return new Statistics() {
        @Override
        public OptionalLong sizeInBytes() {
          return OptionalLong.of(bytes);
        }

        @Override
        public OptionalLong numRows() {
          return OptionalLong.of(rows);
        }
      };
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new LanceReaders.Factory();
    }

    /** A streaming read, on this path too: Spark builds a stream's scan without pushing anything into it. */
    @Override
    public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
      return new LanceStream(options, readSchema);
    }
  }
}
