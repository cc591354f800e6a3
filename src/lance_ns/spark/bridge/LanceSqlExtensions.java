package lancens.spark;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.trees.CurrentOrigin$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * The lance SQL extension: {@code spark.sql.extensions=lancens.spark.LanceSqlExtensions}
 * ({@code lance_ns.spark.build_session} sets it).  It gives lance-spark's statements and
 * table functions to tables of a {@link LanceCatalog}:
 *
 * <ul>
 *   <li>the statements of {@link LanceStatements} (indexes, OPTIMIZE, VACUUM, tags, branches,
 *       the unenforced primary key), read by a parser in front of Spark's and run as the
 *       catalog's procedure {@code system.lance_sql} ({@link LanceProcedure}): each one
 *       the namespace's operation, or pylance with its commit through the namespace;
 *   <li>{@code VECTOR_SEARCH(...)} and {@code SEARCH(...)} ({@link LanceSearch}): the
 *       namespace's QueryTable, as a relation.
 * </ul>
 *
 * Every other SQL goes to Spark's parser untouched.
 */
public final class LanceSqlExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectParser(new AbstractFunction2<SparkSession, ParserInterface, ParserInterface>() {
      @Override
      public ParserInterface apply(SparkSession session, ParserInterface delegate) {
        return parser(session, delegate);
      }
    });
    for (String kind : new String[] {LanceSearch.VECTOR, LanceSearch.TEXT}) {
      ExpressionInfo info = new ExpressionInfo(LanceSearch.class.getName(), kind);
      extensions.injectTableFunction(new Tuple3<>(new FunctionIdentifier(kind), info,
          new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
            @Override
            public LogicalPlan apply(Seq<Expression> arguments) {
              return LanceSearch.relation(SparkSession.active(), kind, arguments);
            }
          }));
    }
    return BoxedUnit.UNIT;
  }

  /**
   * Spark's parser with our statements in front: {@code parsePlan[WithParameters]} of one of them is the
   * {@code CALL} of the catalog's procedure; every other method, and every other SQL, is the
   * delegate's (a proxy, so that the parser interface of each Spark release is met whole).
   */
  static ParserInterface parser(SparkSession session, ParserInterface delegate) {
    InvocationHandler handler = (proxy, method, args) -> {
      // parsePlan, and parsePlanWithParameters (what spark.sql(text, args) calls): ours take no parameters
      if (method.getName().startsWith("parsePlan") && args != null && args.length >= 1 && args[0] instanceof String) {
        String call = rewrite(session, (String) args[0]);
        if (call != null) {
          return delegate.parsePlan(call);
        }
      }
      try {
        return method.invoke(delegate, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
    return (ParserInterface) Proxy.newProxyInstance(
        LanceSqlExtensions.class.getClassLoader(), new Class<?>[] {ParserInterface.class}, handler);
  }

  /**
   * One of our statements as the CALL of its catalog's procedure, or null for any other SQL.
   * What does not parse, or names no lance-ns catalog, is Spark's ParseException (the one
   * exception a parser may throw).
   */
  static String rewrite(SparkSession session, String sql) throws ParseException {
    LanceStatements.Statement statement;
    try {
      statement = LanceStatements.recognise(sql);
    } catch (LanceStatements.SyntaxError e) {
      throw parseError(sql, "PARSE_SYNTAX_ERROR", Map.of("error", "'" + e.near + "'", "hint", ": " + e.getMessage()));
    }
    if (statement == null) {
      return null;
    }
    Resolved at;
    try {
      at = resolve(session, statement.table);
    } catch (NotLance e) {
      throw parseError(sql, "_LEGACY_ERROR_TEMP_0035", Map.of("message", e.getMessage()));
    }
    Map<String, Object> payload = new HashMap<>();
    payload.put("command", statement.command);
    payload.put("table", at.table);
    payload.put("args", statement.args);
    String encoded;
    try {
      encoded = Base64.getEncoder().encodeToString(JSON.writeValueAsBytes(payload));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return "CALL " + quoted(at.catalog) + "." + LanceProcedure.NAMESPACE + "." + LanceProcedure.NAME
        + "('" + encoded + "')";
  }

  /** A table name resolved to its lance catalog and its identifier there. */
  static final class Resolved {
    final String catalog;
    final LanceCatalog lance;
    final List<String> table;

    Resolved(String catalog, LanceCatalog lance, List<String> table) {
      this.catalog = catalog;
      this.lance = lance;
      this.table = table;
    }

    Identifier identifier() {
      return Identifier.of(table.subList(0, table.size() - 1).toArray(new String[0]), table.get(table.size() - 1));
    }
  }

  /**
   * The catalog a name's first part names when it is a catalog, else the current one (with the
   * current namespace before a bare table name), as Spark resolves a table; refused when that
   * catalog is not a lance-ns catalog.
   */
  static Resolved resolve(SparkSession session, List<String> parts) {
    CatalogManager catalogs = session.sessionState().catalogManager();
    String catalog;
    List<String> table;
    if (parts.size() > 1 && catalogs.isCatalogRegistered(parts.get(0))) {
      catalog = parts.get(0);
      table = new ArrayList<>(parts.subList(1, parts.size()));
    } else {
      catalog = catalogs.currentCatalog().name();
      table = new ArrayList<>(parts);
      if (parts.size() == 1) {
        table.addAll(0, Arrays.asList(catalogs.currentNamespace()));
      }
    }
    CatalogPlugin plugin = catalogs.catalog(catalog);
    if (!(plugin instanceof LanceCatalog)) {
      throw new NotLance("table " + String.join(".", parts) + " is not in a lance-ns catalog: catalog " + catalog
          + " is " + plugin.getClass().getName() + ", not " + LanceCatalog.class.getName()
          + " (spark.sql.catalog." + catalog + ")");
    }
    return new Resolved(catalog, (LanceCatalog) plugin, table);
  }

  /** A table of a catalog that is not a lance-ns catalog. */
  static final class NotLance extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotLance(String message) {
      super(message);
    }
  }

  static ParseException parseError(String sql, String errorClass, Map<String, String> parameters) {
    scala.collection.immutable.Map<String, String> params = scala.collection.immutable.Map$.MODULE$.from(
        CollectionConverters.asScala(parameters));
    return new ParseException(Option.apply(sql), CurrentOrigin$.MODULE$.get(), errorClass, params);
  }

  static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /**
   * Throws Spark's AnalysisException with our message (to javac a checked exception, which
   * the Scala code calling ours never declares); written {@code throw analysisError(...)}.
   */
  static RuntimeException analysisError(String message, Throwable cause) {
    // an error condition whose message is the parameter alone (pyspark reads a message through its class)
    scala.collection.immutable.Map<String, String> params = scala.collection.immutable.Map$.MODULE$.from(
        CollectionConverters.asScala(Map.of("errorMessage", message)));
    throw LanceSqlExtensions.<RuntimeException>sneaky(new AnalysisException("_LEGACY_ERROR_TEMP_1332", params,
        Option.apply(cause)));
  }

  /** A namespace error of a statement on {@code table}: Spark's AnalysisException naming both. */
  static RuntimeException statementError(String what, List<String> table, Workers.WorkerError e) {
    throw analysisError(what + " on " + String.join(".", table) + ": " + e.getMessage(), e);
  }

  /** {@code t} thrown where its checked type is not declared (Spark's interfaces do not declare them all). */
  @SuppressWarnings("unchecked")
  static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
