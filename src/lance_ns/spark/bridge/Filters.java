package lancens.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;

/**
 * Spark filters as JSON for the worker, which decides what it can push
 * (lance_ns.spark.filters).  Only values JSON carries exactly are encoded:
 * integers, finite doubles, strings, booleans and dates; anything else
 * (timestamps, decimals, binary) returns null and is left to Spark.
 */
final class Filters {
  private Filters() {}

  /** Filters on one column: their column and, but for the null tests, {@code value()}. */
  private static final Set<String> LEAVES = Set.of(
      "EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual",
      "StringStartsWith", "StringEndsWith", "StringContains", "IsNull", "IsNotNull");

  static Object encode(Filter f) {
    try {
      return node(f);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static Map<String, Object> node(Filter f) {
    String type = f.getClass().getSimpleName();
    Map<String, Object> n = new HashMap<>();
    n.put("type", type);
    if (LEAVES.contains(type)) {
      n.put("attribute", column(f));
      if (!type.startsWith("Is")) {
        n.put("value", value(call(f, "value")));
      }
    } else if (f instanceof In) {
      List<Object> values = new ArrayList<>();
      for (Object v : ((In) f).values()) {
        values.add(value(v));
      }
      n.put("attribute", column(f));
      n.put("value", values);
    } else if (f instanceof Not) {
      n.put("child", node(((Not) f).child()));
    } else if (f instanceof And) {
      n.put("left", node(((And) f).left()));
      n.put("right", node(((And) f).right()));
    } else if (f instanceof Or) {
      n.put("left", node(((Or) f).left()));
      n.put("right", node(((Or) f).right()));
    } else {
      throw new IllegalArgumentException(f.toString());
    }
    return n;
  }

  /** The filter's one column as its name parts, parsed by Spark (backticks, dots). */
  private static String[] column(Filter f) {
    return f.v2references()[0];
  }

  private static Object call(Filter f, String accessor) {
    try {
      return f.getClass().getMethod(accessor).invoke(f);
    } catch (ReflectiveOperationException e) {
      throw new IllegalArgumentException(f.toString(), e);
    }
  }

  private static Object value(Object v) {
    if (v == null || v instanceof String || v instanceof Boolean || v instanceof Integer || v instanceof Long
        || v instanceof Short || v instanceof Byte) {
      return v;
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isFinite(d)) {
        return d;
      }
    }
    if (v instanceof java.sql.Date || v instanceof java.time.LocalDate) {
      Map<String, Object> date = new HashMap<>();
      date.put("date", v.toString()); // yyyy-mm-dd in both
      return date;
    }
    throw new IllegalArgumentException(String.valueOf(v)); // BigDecimal, timestamps, binary...
  }
}
