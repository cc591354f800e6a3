package lancens.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation$;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code VECTOR_SEARCH(...)} and {@code SEARCH(...)}, the lance SQL extension's table
 * functions, in lance-spark's forms: named arguments, or positional
 * {@code (table, query_vector | query [, k])}.  The arguments are literals, read here; the
 * table is a table of a {@link LanceCatalog}; the result columns come from the bridge worker
 * ({@code lance_ns.spark.search}), which also runs the search, as the namespace's QueryTable,
 * when the relation is scanned (one partition).
 */
final class LanceSearch {
  private LanceSearch() {}

  static final String VECTOR = "vector_search";
  static final String TEXT = "search";

  private static String[] positional(String kind) {
    return kind.equals(VECTOR) ? new String[] {"table", "query_vector", "k"} : new String[] {"table", "query", "k"};
  }

  static LogicalPlan relation(SparkSession session, String kind, Seq<Expression> arguments) {
    String function = kind.toUpperCase(Locale.ROOT);
    Map<String, Object> args = new LinkedHashMap<>();
    boolean named = false;
    int position = 0;
    for (Expression e : CollectionConverters.asJava(arguments)) {
      if (e instanceof NamedArgumentExpression) {
        NamedArgumentExpression n = (NamedArgumentExpression) e;
        named = true;
        args.put(n.key().toLowerCase(Locale.ROOT), literal(function, n.value()));
      } else {
        if (named) {
          throw LanceSqlExtensions.analysisError(function + " does not support mixing named and positional arguments", null);
        }
        String[] names = positional(kind);
        if (position >= names.length) {
          throw LanceSqlExtensions.analysisError(function + " received too many positional arguments", null);
        }
        args.put(names[position++], literal(function, e));
      }
    }
    Object table = args.remove("table");
    if (!(table instanceof String)) {
      throw LanceSqlExtensions.analysisError(function + ": table is required (a table name, as a string)", null);
    }
    List<String> parts;
    try {
      parts = new ArrayList<>(CollectionConverters.asJava(session.sessionState().sqlParser()
          .parseMultipartIdentifier((String) table)));
    } catch (Exception e) {
      throw LanceSqlExtensions.analysisError(function + ": table " + table + " is not a table name: " + e.getMessage(), e);
    }
    LanceSqlExtensions.Resolved at;
    try {
      at = LanceSqlExtensions.resolve(session, parts);
    } catch (LanceSqlExtensions.NotLance e) {
      throw LanceSqlExtensions.analysisError(function + ": " + e.getMessage(), e);
    }
    Map<String, Object> reply;
    try {
      reply = at.lance.call("search_schema", "kind", kind, "table", at.table, "args", args);
    } catch (Workers.WorkerError e) {
      throw LanceSqlExtensions.statementError(function, at.table, e);
    }
    StructType schema = (StructType) DataType.fromJson((String) reply.get("schema"));
    Map<String, Object> spec = new HashMap<>();
    spec.put("search", kind);
    spec.put("catalog", at.lance.namespaceProperties());
    spec.put("table", at.table);
    spec.put("args", args);
    spec.put("schema", schema.json());
    String json;
    try {
      json = LanceSqlExtensions.JSON.writeValueAsString(spec);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    SearchTable found = new SearchTable(function + "(" + table + ")", schema, json); // (json holds the catalog's properties)
    return DataSourceV2Relation$.MODULE$.create(found, Option.apply(at.lance), Option.apply(at.identifier()));
  }

  /** A literal argument as a JSON value (arrays as lists; decimals, as SQL writes 0.5, as doubles). */
  static Object literal(String function, Expression e) {
    if (!e.foldable()) {
      throw LanceSqlExtensions.analysisError(function + ": argument must be a foldable literal: " + e.sql(), null);
    }
    return json(e.eval(null), e.dataType());
  }

  static Object json(Object v, DataType type) {
    if (v == null) {
      return null;
    }
    if (v instanceof UTF8String) {
      return v.toString();
    }
    if (v instanceof Decimal) {
      return ((Decimal) v).toDouble();
    }
    if (v instanceof ArrayData) {
      ArrayData array = (ArrayData) v;
      DataType element = ((ArrayType) type).elementType();
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < array.numElements(); i++) {
        out.add(array.isNullAt(i) ? null : json(array.get(i, element), element));
      }
      return out;
    }
    if (v instanceof Byte || v instanceof Short || v instanceof Integer) {
      return ((Number) v).longValue();
    }
    return v; // Long, Float, Double, Boolean
  }

  /** The search: a table whose one scan is itself, of one partition (nothing to push down or prune). */
  static final class SearchTable implements SupportsRead, Scan, Batch {
    private final String name;
    private final StructType schema;
    private final String spec;

    SearchTable(String name, StructType schema, String spec) {
      this.name = name;
      this.schema = schema;
      this.spec = spec;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Collections.singleton(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return () -> this;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public String description() {
      return "lance " + name; // never the spec: it carries the catalog's properties, credentials among them
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      return new InputPartition[] {new LanceReaders.Partition(spec)};
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new LanceReaders.Factory();
    }
  }
}
