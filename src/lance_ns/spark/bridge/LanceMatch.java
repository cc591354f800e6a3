package lancens.spark;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.UserDefinedScalarFunc;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The full-text predicates of lance-spark, functions of a {@link LanceCatalog} (so, as there,
 * written unqualified where the catalog is the current one, {@code USE lake}):
 *
 * <pre>
 * WHERE lance_match(column, 'query' [, 'fuzziness=1,operator=AND,boost=2,prefix_length=1,max_expansions=50'])
 * WHERE lance_match_phrase(column, 'query' [, slop])
 * </pre>
 *
 * A predicate is not evaluated row by row: the lance table's scan takes it
 * ({@link LanceProvider.LanceScanBuilder#pushPredicates}) and answers it with the table's
 * full-text index (every matching row, unindexed fragments searched too).  One such predicate
 * per scan, at the top of the WHERE (alone or under AND); anywhere else it cannot be answered
 * and says so.
 */
final class LanceMatch implements UnboundFunction, ScalarFunction<Boolean> {
  static final String MATCH = "lance_match";
  static final String PHRASE = "lance_match_phrase";

  private final String name;
  private final DataType[] inputs;

  LanceMatch(String name) {
    this(name, new DataType[0]);
  }

  private LanceMatch(String name, DataType[] inputs) {
    this.name = name;
    this.inputs = inputs;
  }

  static boolean isOne(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.equals(MATCH) || n.equals(PHRASE);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return name + "(column, query [, " + (name.equals(MATCH) ? "'options'" : "slop") + "]): rows the full-text index "
        + "finds for query in column";
  }

  @Override
  public BoundFunction bind(StructType inputType) {
    StructField[] fields = inputType.fields();
    boolean ok = (fields.length == 2 || fields.length == 3) && fields[0].dataType() instanceof StringType
        && fields[1].dataType() instanceof StringType
        && (fields.length == 2 || (name.equals(MATCH) ? fields[2].dataType() instanceof StringType
                                                        : fields[2].dataType() instanceof IntegerType));
    if (!ok) {
      throw new UnsupportedOperationException(description() + "; got " + inputType.simpleString());
    }
    DataType[] types = new DataType[fields.length];
    for (int i = 0; i < types.length; i++) {
      types[i] = fields[i].dataType();
    }
    return new LanceMatch(name, types);
  }

  @Override
  public DataType[] inputTypes() {
    return inputs;
  }

  @Override
  public DataType resultType() {
    return DataTypes.BooleanType;
  }

  @Override
  public String canonicalName() {
    return "lancens." + name;
  }

  @Override
  public Boolean produceResult(InternalRow input) {
    throw new UnsupportedOperationException(name + "(...) is answered by a lance table's full-text index while it is "
        + "scanned: use it in the WHERE of one lance table, alone or joined with AND (not under OR or NOT, not on a "
        + "join's result)");
  }

  /**
   * The full-text query a pushed predicate is, as the bridge worker reads it
   * ({@code kind}, {@code column}, {@code query}, {@code options}), or null for any other.
   */
  static Map<String, Object> fullText(Predicate p) {
    UserDefinedScalarFunc call = null;
    // a boolean function as a predicate: Spark writes it as (f = true), or wraps it alone
    if (p.children().length >= 1 && p.children()[0] instanceof UserDefinedScalarFunc
        && (p.name().equals("=") && p.children().length == 2 && isTrue(p.children()[1])
            || p.children().length == 1)) {
      call = (UserDefinedScalarFunc) p.children()[0];
    }
    if (call == null || !call.canonicalName().startsWith("lancens.") || !isOne(call.name())) {
      return null;
    }
    Expression[] args = call.children();
    if (args.length < 2 || !(args[0] instanceof NamedReference) || !(args[1] instanceof Literal)) {
      return null;
    }
    Map<String, Object> query = new HashMap<>();
    query.put("kind", call.name().toLowerCase(Locale.ROOT).equals(PHRASE) ? "phrase" : "match");
    query.put("column", String.join(".", ((NamedReference) args[0]).fieldNames()));
    query.put("query", String.valueOf(((Literal<?>) args[1]).value()));
    if (args.length > 2 && args[2] instanceof Literal) {
      query.put("options", String.valueOf(((Literal<?>) args[2]).value()));
    }
    return query;
  }

  private static boolean isTrue(Expression e) {
    return e instanceof Literal && Boolean.TRUE.equals(((Literal<?>) e).value());
  }
}
