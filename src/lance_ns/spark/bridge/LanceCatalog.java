package lancens.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark SQL catalog over any lance-ns namespace:
 *
 * <pre>
 * spark.sql.catalog.lake        = lancens.spark.LanceCatalog
 * spark.sql.catalog.lake.impl   = dir          (rest, hive, glue, unity, iceberg, module:Class)
 * spark.sql.catalog.lake.root   = /data/lake   (the impl's properties, without the impl prefix)
 * # or spark.sql.catalog.lake.config = a named lance-ns configuration
 * </pre>
 *
 * <p>Every call goes to a bridge worker ({@link Workers}), which answers it
 * through the namespace the properties name ({@code lance_ns.spark.catalog}).
 * Tables read on the JVM path ({@link LanceProvider}'s scan) and write
 * through the Python source, both resolving the table through the same
 * namespace configuration.  A namespace error keeps its lance-ns code in the
 * message; the ones Spark has its own exception for (codes 1-5) are thrown as
 * that exception, so IF EXISTS / IF NOT EXISTS behave as Spark defines.
 *
 * <p>A staging catalog: CTAS and RTAS change the namespace only when their
 * job has succeeded, in one step ({@link #stageCreate}, {@code lance_ns.spark.staging}).
 */
public class LanceCatalog implements StagingTableCatalog, SupportsNamespaces, ProcedureCatalog, FunctionCatalog {
  static final int NAMESPACE_NOT_FOUND = 1;
  static final int NAMESPACE_ALREADY_EXISTS = 2;
  static final int NAMESPACE_NOT_EMPTY = 3;
  static final int TABLE_NOT_FOUND = 4;
  static final int TABLE_ALREADY_EXISTS = 5;

  private String name;
  private Map<String, String> properties;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.properties = new HashMap<>(options.asCaseSensitiveMap());
  }

  @Override
  public String name() {
    return name;
  }

  /** The catalog's properties: how the bridge worker connects to its namespace. */
  Map<String, String> namespaceProperties() {
    return properties;
  }

  /** One catalog call on a worker; a namespace error is thrown as {@link Workers.WorkerError}. */
  Map<String, Object> call(String call, Object... args) {
    Map<String, Object> named = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      named.put((String) args[i], args[i + 1]);
    }
    Map<String, Object> request = new HashMap<>();
    request.put("op", "catalog");
    request.put("call", call);
    request.put("catalog", properties);
    request.put("args", named);
    return Workers.call(request);
  }

  /**
   * A namespace error Spark has no exception of its own for: Spark's AnalysisException,
   * its message naming the catalog, the lance_ns error and its code.
   */
  private RuntimeException failed(Workers.WorkerError e) {
    throw LanceSqlExtensions.analysisError("catalog " + name + ": " + e.getMessage(), e);
  }

  /**
   * A failed call on table {@code ident} as Spark's own exception where Spark has one (what
   * {@code IF [NOT] EXISTS} and its messages rely on), else {@link #failed}.  Thrown here: the
   * return type only lets a caller write {@code throw tableError(...)}.
   */
  private RuntimeException tableError(Identifier ident, Workers.WorkerError e) {
    switch (e.code) {
      case TABLE_ALREADY_EXISTS:
        throw LanceSqlExtensions.<RuntimeException>sneaky(new TableExists(ident, e));
      case TABLE_NOT_FOUND:
        throw LanceSqlExtensions.<RuntimeException>sneaky(new NoSuchTable(ident, e));
      case NAMESPACE_NOT_FOUND:
        throw LanceSqlExtensions.<RuntimeException>sneaky(new NoSuchNamespace(ident.namespace(), e));
      default:
        throw failed(e);
    }
  }

  static List<String> id(Identifier ident) {
    List<String> parts = new ArrayList<>(Arrays.asList(ident.namespace()));
    parts.add(ident.name());
    return parts;
  }

  // ---------------------------------------------------------------- procedures

  /** {@code system.lance_sql}: the statements of the lance SQL extension ({@link LanceProcedure}). */
  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    if (Arrays.equals(ident.namespace(), new String[] {LanceProcedure.NAMESPACE})
        && ident.name().equalsIgnoreCase(LanceProcedure.NAME)) {
      return new LanceProcedure(this);
    }
    throw LanceSqlExtensions.analysisError("catalog " + name + " has no procedure " + String.join(".", ident.namespace())
        + "." + ident.name() + " (it has " + LanceProcedure.NAMESPACE + "." + LanceProcedure.NAME + ")", null);
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    if (Arrays.equals(namespace, new String[] {LanceProcedure.NAMESPACE})) {
      return new Identifier[] {Identifier.of(namespace, LanceProcedure.NAME)};
    }
    return new Identifier[0];
  }

  // ---------------------------------------------------------------- functions

  /** lance_match and lance_match_phrase ({@link LanceMatch}), in any namespace of the catalog. */
  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[] {Identifier.of(namespace, LanceMatch.MATCH), Identifier.of(namespace, LanceMatch.PHRASE)};
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (LanceMatch.isOne(ident.name())) {
      return new LanceMatch(ident.name().toLowerCase(java.util.Locale.ROOT));
    }
    throw new NoSuchFunctionException(ident);
  }

  // ---------------------------------------------------------------- namespaces

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    try {
      List<?> found = (List<?>) call("list_namespaces", "namespace", namespace).get("namespaces");
      String[][] out = new String[found.size()][];
      for (int i = 0; i < out.length; i++) {
        out[i] = ((List<?>) found.get(i)).toArray(new String[0]);
      }
      return out;
    } catch (Workers.WorkerError e) {
      if (e.code == NAMESPACE_NOT_FOUND) {
        throw new NoSuchNamespace(namespace, e);
      }
      throw failed(e);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
    try {
      return (Map<String, String>) call("namespace_metadata", "namespace", namespace).get("properties");
    } catch (Workers.WorkerError e) {
      if (e.code == NAMESPACE_NOT_FOUND) {
        throw new NoSuchNamespace(namespace, e);
      }
      throw failed(e);
    }
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata) throws NamespaceAlreadyExistsException {
    try {
      call("create_namespace", "namespace", namespace, "properties", metadata);
    } catch (Workers.WorkerError e) {
      if (e.code == NAMESPACE_ALREADY_EXISTS) {
        throw new NamespaceExists(namespace, e);
      }
      throw failed(e);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException(
        "ALTER NAMESPACE is not supported by the lance catalog (UnsupportedOperationError, code 0): "
            + "set properties when creating it (CREATE NAMESPACE ... WITH PROPERTIES)");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade) throws NoSuchNamespaceException, NonEmptyNamespaceException {
    try {
      return (Boolean) call("drop_namespace", "namespace", namespace, "cascade", cascade).get("dropped");
    } catch (Workers.WorkerError e) {
      if (e.code == NAMESPACE_NOT_EMPTY) {
        throw new NonEmptyNamespaceException(namespace, e.getMessage(), scala.Option.apply(e));
      }
      if (e.code == NAMESPACE_NOT_FOUND) {
        throw new NoSuchNamespace(namespace, e);
      }
      throw failed(e);
    }
  }

  // -------------------------------------------------------------------- tables

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    try {
      List<?> names = (List<?>) call("list_tables", "namespace", namespace).get("tables");
      Identifier[] out = new Identifier[names.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = Identifier.of(namespace, (String) names.get(i));
      }
      return out;
    } catch (Workers.WorkerError e) {
      if (e.code == NAMESPACE_NOT_FOUND) {
        throw new NoSuchNamespace(namespace, e);
      }
      throw failed(e);
    }
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return load(ident, "table", id(ident));
  }

  /** {@code VERSION AS OF}: a version number, or a tag's name. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return load(ident, "table", id(ident), "version", version);
  }

  /** {@code TIMESTAMP AS OF}: the version current at that time (microseconds since the epoch). */
  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    return load(ident, "table", id(ident), "timestamp", timestamp);
  }

  private Table load(Identifier ident, Object... args) throws NoSuchTableException {
    try {
      return table(ident, call("load_table", args));
    } catch (Workers.WorkerError e) {
      // a table in a missing namespace is a missing table to Spark
      if (e.code == TABLE_NOT_FOUND || e.code == NAMESPACE_NOT_FOUND) {
        throw new NoSuchTable(ident, e);
      }
      throw failed(e);
    }
  }

  @SuppressWarnings("unchecked")
  private Table table(Identifier ident, Map<String, Object> reply) {
    return new LanceCatalogTable(
        this,
        ident,
        (StructType) DataType.fromJson((String) reply.get("schema")),
        (Map<String, String>) reply.get("options"),
        (Map<String, String>) reply.get("properties"));
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    refusePartitions(partitions);
    try {
      return table(ident, call("create_table", "table", id(ident), "schema", schema.json(), "properties", properties));
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e);
    }
  }

  private static void refusePartitions(Transform[] partitions) {
    if (partitions.length > 0) {
      throw new UnsupportedOperationException(
          "PARTITIONED BY is not supported by the lance catalog (UnsupportedOperationError, code 0)");
    }
  }

  // ------------------------------------------------------- staged CTAS and RTAS
  // (Spark 4 calls the TableInfo and Column[] variants; the interface's defaults bring them here, as for createTable)

  /**
   * CTAS ({@code CREATE TABLE ... AS SELECT}, {@code df.writeTo(t).create()}): nothing in
   * the namespace until the job has succeeded; the job's files are deleted if it fails.
   * Where the namespace cannot tell a new table's location before its entry exists (a
   * REST server's client), Spark's non-atomic path instead: the table is created now
   * and dropped if the job fails while the driver lives.
   */
  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreate(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    Map<String, Object> reply;
    try {
      reply = stage(ident, schema, partitions, properties, "create");
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e);
    }
    if (isAtomic(reply)) {
      return staged(ident, schema, properties, reply);
    }
    return createdNow(ident, schema, partitions, properties);
  }

  /**
   * RTAS ({@code REPLACE TABLE ... AS SELECT}, {@code df.writeTo(t).replace()}): the table
   * stays as it is until the job has succeeded, then one Lance Overwrite commit gives it
   * the new schema and rows.  An RTAS whose TBLPROPERTIES the table lacks takes Spark's
   * non-atomic path (drop, create, write).
   */
  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageReplace(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException, NoSuchTableException {
    Map<String, Object> reply;
    try {
      reply = stage(ident, schema, partitions, properties, "replace");
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e);
    }
    return stagedOrNow(ident, schema, partitions, properties, reply);
  }

  /** {@code CREATE OR REPLACE TABLE ... AS SELECT}, {@code df.writeTo(t).createOrReplace()}: as the two above. */
  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreateOrReplace(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException {
    Map<String, Object> reply;
    try {
      reply = stage(ident, schema, partitions, properties, "create_or_replace");
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e);
    }
    return stagedOrNow(ident, schema, partitions, properties, reply);
  }

  private Map<String, Object> stage(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties, String mode) {
    refusePartitions(partitions);
    return call("stage_table", "table", id(ident), "schema", schema.json(), "properties", properties, "mode", mode);
  }

  private static boolean isAtomic(Map<String, Object> reply) {
    return (Boolean) reply.get("atomic");
  }

  /** The table the job writes, committed or aborted by the namespace as one staged change. */
  @SuppressWarnings("unchecked")
  private StagedTable staged(Identifier ident, StructType schema, Map<String, String> properties,
      Map<String, Object> reply) {
    Map<String, Object> stage = (Map<String, Object>) reply.get("stage");
    Map<String, String> options = (Map<String, String>) reply.get("options");
    return new LanceStagedTable(
        new LanceCatalogTable(this, ident, schema, options, properties),
        () -> stagedCall("commit_staged", ident, stage),
        () -> stagedCall("abort_staged", ident, stage));
  }

  private void stagedCall(String call, Identifier ident, Map<String, Object> stage) {
    try {
      call(call, "table", id(ident), "stage", stage);
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e); // TableExists: another CTAS of the name committed first
    }
  }

  private StagedTable stagedOrNow(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties, Map<String, Object> reply) throws NoSuchNamespaceException {
    if (isAtomic(reply)) {
      return staged(ident, schema, properties, reply);
    }
    if ((Boolean) reply.get("replaces")) {
      dropTable(ident);
    }
    try {
      return createdNow(ident, schema, partitions, properties);
    } catch (TableAlreadyExistsException e) {  // created by another statement since the drop
      throw LanceSqlExtensions.<RuntimeException>sneaky(e);
    }
  }

  /** Spark's non-atomic path: the table created now, dropped again if the job fails. */
  private StagedTable createdNow(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    SupportsWrite created = (SupportsWrite) createTable(ident, schema, partitions, properties);
    return new LanceStagedTable(created, () -> { }, () -> dropTable(ident));
  }

  /** ADD / DROP / RENAME COLUMN, through the namespace's AlterTable* operations. */
  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    List<Map<String, Object>> encoded = new ArrayList<>();
    for (TableChange change : changes) {
      Map<String, Object> c = new HashMap<>();
      if (change instanceof TableChange.AddColumn) {
        TableChange.AddColumn add = (TableChange.AddColumn) change;
        c.put("type", "add");
        c.put("name", column(add.fieldNames()));
        c.put("dataType", add.dataType().json());
      } else if (change instanceof TableChange.DeleteColumn) {
        c.put("type", "drop");
        c.put("name", column(((TableChange.DeleteColumn) change).fieldNames()));
      } else if (change instanceof TableChange.RenameColumn) {
        TableChange.RenameColumn rename = (TableChange.RenameColumn) change;
        c.put("type", "rename");
        c.put("name", column(rename.fieldNames()));
        c.put("newName", rename.newName());
      } else {
        throw new UnsupportedOperationException("ALTER TABLE " + change.getClass().getSimpleName()
            + " is not supported by the lance catalog (UnsupportedOperationError, code 0)");
      }
      encoded.add(c);
    }
    try {
      return table(ident, call("alter_table", "table", id(ident), "changes", encoded));
    } catch (Workers.WorkerError e) {
      throw tableError(ident, e);
    }
  }

  private static String column(String[] fieldNames) {
    if (fieldNames.length != 1) {
      throw new UnsupportedOperationException(
          "the lance catalog alters top-level columns only (UnsupportedOperationError, code 0)");
    }
    return fieldNames[0];
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return (Boolean) call("drop_table", "table", id(ident), "purge", false).get("dropped");
  }

  /** DROP TABLE ... PURGE: also deletes the data of a table registered at a location the namespace does not own. */
  @Override
  public boolean purgeTable(Identifier ident) {
    return (Boolean) call("drop_table", "table", id(ident), "purge", true).get("dropped");
  }

  @Override
  public void renameTable(Identifier from, Identifier to) throws NoSuchTableException, TableAlreadyExistsException {
    try {
      call("rename_table", "table", id(from), "to", id(to));
    } catch (Workers.WorkerError e) {
      if (e.code == TABLE_NOT_FOUND) {
        throw new NoSuchTable(from, e);
      }
      if (e.code == TABLE_ALREADY_EXISTS) {
        throw new TableExists(to, e);
      }
      throw failed(e);
    }
  }

  // ------------------------------------------- Spark's exceptions, with the code

  /** The lance-ns error (class, code, message) after Spark's own message. */
  private static String withCause(String spark, Workers.WorkerError e) {
    return spark + " [lance-ns " + e.getMessage() + "]";
  }

  static final class NoSuchNamespace extends NoSuchNamespaceException {
    private static final long serialVersionUID = 1L;
    private final transient Workers.WorkerError error;

    NoSuchNamespace(String[] namespace, Workers.WorkerError error) {
      super(namespace);
      this.error = error;
    }

    @Override
    public String getMessage() {
      return withCause(super.getMessage(), error);
    }
  }

  static final class NamespaceExists extends NamespaceAlreadyExistsException {
    private static final long serialVersionUID = 1L;
    private final transient Workers.WorkerError error;

    NamespaceExists(String[] namespace, Workers.WorkerError error) {
      super(namespace);
      this.error = error;
    }

    @Override
    public String getMessage() {
      return withCause(super.getMessage(), error);
    }
  }

  static final class NoSuchTable extends NoSuchTableException {
    private static final long serialVersionUID = 1L;
    private final transient Workers.WorkerError error;

    NoSuchTable(Identifier ident, Workers.WorkerError error) {
      super(ident);
      this.error = error;
    }

    @Override
    public String getMessage() {
      return withCause(super.getMessage(), error);
    }
  }

  static final class TableExists extends TableAlreadyExistsException {
    private static final long serialVersionUID = 1L;
    private final transient Workers.WorkerError error;

    TableExists(Identifier ident, Workers.WorkerError error) {
      super(ident);
      this.error = error;
    }

    @Override
    public String getMessage() {
      return withCause(super.getMessage(), error);
    }
  }
}
