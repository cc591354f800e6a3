package lancens.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * Spark filters as JSON for the worker, which decides what it can push
 * (lance_ns.spark.filters).  Only values JSON carries exactly are encoded:
 * integers, finite doubles, strings, booleans and dates; anything else
 * (timestamps, decimals, binary) returns null and is left to Spark.
 */
final class Filters {
  private Filters() {}

  static Object encode(Filter f) {
    try {
      return node(f);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static Map<String, Object> node(Filter f) {
    Map<String, Object> n = new HashMap<>();
    n.put("type", f.getClass().getSimpleName());
    if (f instanceof EqualTo) {
      leaf(n, ((EqualTo) f).attribute(), ((EqualTo) f).value());
    } else if (f instanceof EqualNullSafe) {
      leaf(n, ((EqualNullSafe) f).attribute(), ((EqualNullSafe) f).value());
    } else if (f instanceof GreaterThan) {
      leaf(n, ((GreaterThan) f).attribute(), ((GreaterThan) f).value());
    } else if (f instanceof GreaterThanOrEqual) {
      leaf(n, ((GreaterThanOrEqual) f).attribute(), ((GreaterThanOrEqual) f).value());
    } else if (f instanceof LessThan) {
      leaf(n, ((LessThan) f).attribute(), ((LessThan) f).value());
    } else if (f instanceof LessThanOrEqual) {
      leaf(n, ((LessThanOrEqual) f).attribute(), ((LessThanOrEqual) f).value());
    } else if (f instanceof StringStartsWith) {
      leaf(n, ((StringStartsWith) f).attribute(), ((StringStartsWith) f).value());
    } else if (f instanceof StringEndsWith) {
      leaf(n, ((StringEndsWith) f).attribute(), ((StringEndsWith) f).value());
    } else if (f instanceof StringContains) {
      leaf(n, ((StringContains) f).attribute(), ((StringContains) f).value());
    } else if (f instanceof IsNull) {
      n.put("attribute", ((IsNull) f).attribute());
    } else if (f instanceof IsNotNull) {
      n.put("attribute", ((IsNotNull) f).attribute());
    } else if (f instanceof In) {
      List<Object> values = new ArrayList<>();
      for (Object v : ((In) f).values()) {
        values.add(value(v));
      }
      n.put("attribute", ((In) f).attribute());
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

  private static void leaf(Map<String, Object> n, String attribute, Object value) {
    n.put("attribute", attribute);
    n.put("value", value(value));
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
