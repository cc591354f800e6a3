package lancens.spark;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code CALL <catalog>.system.lance_sql('<statement>')}: one statement of the lance SQL
 * extension ({@link LanceStatements}, base64 JSON as {@link LanceSqlExtensions#rewrite}
 * writes it), run by a bridge worker through the catalog's namespace
 * ({@code lance_ns.spark.commands}), its rows answered with the statement's own columns.
 * Spark invokes a procedure once, while it analyses the CALL: the statement runs when
 * {@code spark.sql(...)} is called, as Spark's own DDL does.
 */
final class LanceProcedure implements UnboundProcedure, BoundProcedure {
  static final String NAMESPACE = "system";
  static final String NAME = "lance_sql";

  private final LanceCatalog catalog;

  LanceProcedure(LanceCatalog catalog) {
    this.catalog = catalog;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "runs a statement of the lance SQL extension (OPTIMIZE, VACUUM, CREATE INDEX, ...) through the catalog's "
        + "namespace";
  }

  @Override
  public BoundProcedure bind(StructType inputType) {
    return this;
  }

  @Override
  public ProcedureParameter[] parameters() {
    return new ProcedureParameter[] {ProcedureParameter.in("statement", DataTypes.StringType).build()};
  }

  @Override
  public boolean isDeterministic() {
    return false;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Iterator<Scan> call(InternalRow input) {
    Map<String, Object> statement;
    try {
      byte[] json = Base64.getDecoder().decode(input.getUTF8String(0).toString());
      statement = LanceSqlExtensions.JSON.readValue(new String(json, StandardCharsets.UTF_8), Map.class);
    } catch (Exception e) {
      throw LanceSqlExtensions.analysisError("lance_sql takes the statement lance's SQL extension writes: " + e, e);
    }
    List<String> table = (List<String>) statement.get("table");
    String command = (String) statement.get("command");
    if (command.endsWith("_columns")) {
      withSourceRows((Map<String, Object>) statement.get("args"));
    }
    Map<String, Object> reply;
    try {
      reply = catalog.call("statement", "command", command, "table", table, "args", statement.get("args"));
    } catch (Workers.WorkerError e) {
      throw LanceSqlExtensions.statementError(command.replace('_', ' ').toUpperCase(java.util.Locale.ROOT), table, e);
    }
    String ddl = (String) reply.get("schema");
    StructType schema = ddl.isEmpty() ? new StructType() : StructType.fromDDL(ddl); // "": a statement of no rows
    List<List<Object>> rows = (List<List<Object>>) reply.get("rows");
    InternalRow[] out = new InternalRow[rows.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = row(schema, rows.get(i));
    }
    return Collections.<Scan>singletonList(new Rows(schema, out)).iterator();
  }

  /**
   * ADD|UPDATE COLUMNS ... FROM view: the view's {@code _rowaddr} and those columns, collected
   * here on the driver (as JSON lines, with the view's schema) for the bridge worker to write.
   */
  @SuppressWarnings("unchecked")
  private static void withSourceRows(Map<String, Object> args) {
    List<String> columns = (List<String>) args.get("columns");
    List<Column> selected = new ArrayList<>();
    selected.add(functions.col(ROW_ADDRESS));
    for (String c : columns) {
      selected.add(functions.col(LanceSqlExtensions.quoted(c)));
    }
    Dataset<Row> source = SparkSession.active().table((String) args.get("source"))
        .select(selected.toArray(new Column[0]));
    args.put("schema", source.schema().json());
    args.put("rows", source.toJSON().collectAsList());
  }

  static final String ROW_ADDRESS = "_rowaddr";

  /** A JSON row in the Spark internal values of ``schema``. */
  static InternalRow row(StructType schema, List<Object> values) {
    StructField[] fields = schema.fields();
    Object[] out = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      out[i] = value(fields[i].dataType(), values.get(i));
    }
    return new GenericInternalRow(out);
  }

  static Object value(DataType type, Object v) {
    if (v == null) {
      return null;
    }
    if (type instanceof LongType) {
      return ((Number) v).longValue();
    }
    if (type instanceof IntegerType) {
      return ((Number) v).intValue();
    }
    if (type instanceof BooleanType) {
      return v;
    }
    if (type instanceof StringType) {
      return UTF8String.fromString(String.valueOf(v));
    }
    if (type instanceof ArrayType) {
      List<?> items = (List<?>) v;
      Object[] out = new Object[items.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = value(((ArrayType) type).elementType(), items.get(i));
      }
      return new GenericArrayData(out);
    }
    throw new IllegalArgumentException("no conversion of a statement's result to " + type);
  }

  /** A statement's rows: what Spark's CALL answers. */
  static final class Rows implements LocalScan {
    private final StructType schema;
    private final InternalRow[] rows;

    Rows(StructType schema, InternalRow[] rows) {
      this.schema = schema;
      this.rows = rows;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public InternalRow[] rows() {
      return rows;
    }
  }
}
