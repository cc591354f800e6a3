package lancens.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The statements of the lance SQL extension, in lance-spark's syntax, recognised in a SQL
 * text: {@link #recognise} answers the statement (its command, table and arguments), or null
 * for any other SQL, which Spark's own parser then reads.
 *
 * <pre>
 * ALTER TABLE t CREATE INDEX name USING method (column) [WITH (k = v, ...)]
 * ALTER TABLE t DROP INDEX name
 * ALTER TABLE t OPTIMIZE INDEX name [WITH (...)]      ALTER TABLE t REFRESH INDEX name [WITH (...)]
 * SHOW INDEXES|INDEX FROM|IN t
 * OPTIMIZE t [WITH (...)]                              VACUUM t [WITH (...)]
 * ALTER TABLE t CREATE TAG|BRANCH [IF NOT EXISTS] name [AS OF VERSION n | BRANCH b [VERSION n] | TAG t]
 * ALTER TABLE t DROP TAG|BRANCH [IF EXISTS] name
 * SHOW TAGS|TAG|BRANCHES|BRANCH FROM|IN t
 * ALTER TABLE t SET UNENFORCED PRIMARY KEY (column, ...)
 * ALTER TABLE t ADD|UPDATE COLUMNS column[, ...] FROM view     (the view has _rowaddr)
 * </pre>
 *
 * Keywords are matched regardless of case, names may be backquoted, option names are
 * lower-cased (as lance-spark matches them), option values are numbers, booleans or strings.
 */
final class LanceStatements {
  private LanceStatements() {}

  /** A recognised statement: the command the bridge worker runs, its table's name parts and arguments. */
  static final class Statement {
    final String command;
    final List<String> table;
    final Map<String, Object> args = new LinkedHashMap<>();

    Statement(String command, List<String> table) {
      this.command = command;
      this.table = table;
    }
  }

  /** Thrown for a statement that starts as one of ours and then does not parse: the message says where. */
  static final class SyntaxError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The text where the statement stopped parsing (empty at its end). */
    final String near;

    SyntaxError(String message, String near) {
      super(message);
      this.near = near;
    }
  }

  static Statement recognise(String sql) {
    List<Token> tokens;
    try {
      tokens = tokenize(sql);
    } catch (SyntaxError e) {
      return null; // not ours to judge: Spark's parser reports it
    }
    Cursor c = new Cursor(tokens, sql);
    if (c.word("ALTER") && c.peekWord(1, "TABLE")) {
      c.next();
      c.next();
      List<String> table;
      try {
        table = c.name();
      } catch (SyntaxError e) {
        return null; // no table name: Spark's parser reports it
      }
      return alterTable(c, table);
    }
    if (c.word("SHOW") && (c.peekWord(1, "INDEXES") || c.peekWord(1, "INDEX") || c.peekWord(1, "TAGS")
        || c.peekWord(1, "TAG") || c.peekWord(1, "BRANCHES") || c.peekWord(1, "BRANCH"))
        && (c.peekWord(2, "FROM") || c.peekWord(2, "IN"))) {
      c.next();
      String what = c.next().text.toUpperCase(Locale.ROOT);
      c.next();
      String command = what.startsWith("INDEX") ? "show_indexes" : what.startsWith("TAG") ? "show_tags" : "show_branches";
      Statement s = new Statement(command, c.name());
      c.end();
      return s;
    }
    if ((c.word("OPTIMIZE") || c.word("VACUUM")) && c.peekName(1)) {
      String command = c.next().text.toLowerCase(Locale.ROOT);
      Statement s = new Statement(command, c.name());
      s.args.put("options", c.withOptions());
      c.end();
      return s;
    }
    return null;
  }

  private static Statement alterTable(Cursor c, List<String> table) {
    if ((c.word("ADD") || c.word("UPDATE")) && c.peekWord(1, "COLUMNS") && c.peek(2).kind != Kind.SYMBOL) {
      return backfill(c, table); // ADD COLUMNS (c TYPE, ...) with its parenthesis is Spark's own
    }
    if (c.word("CREATE") && c.peekWord(1, "INDEX")) {
      c.next();
      c.next();
      Statement s = new Statement("create_index", table);
      s.args.put("name", c.identifier("an index name"));
      c.expectWord("USING");
      s.args.put("method", c.identifier("an index method"));
      s.args.put("columns", c.columnList());
      s.args.put("options", c.withOptions());
      c.end();
      return s;
    }
    for (String verb : new String[] {"DROP", "OPTIMIZE", "REFRESH"}) {
      if (c.word(verb) && c.peekWord(1, "INDEX")) {
        c.next();
        c.next();
        Statement s = new Statement(verb.toLowerCase(Locale.ROOT) + "_index", table);
        s.args.put("name", c.identifier("an index name"));
        if (!verb.equals("DROP")) {
          s.args.put("options", c.withOptions());
        }
        c.end();
        return s;
      }
    }
    for (String kind : new String[] {"TAG", "BRANCH"}) {
      String lower = kind.toLowerCase(Locale.ROOT);
      if (c.word("CREATE") && c.peekWord(1, kind)) {
        c.next();
        c.next();
        Statement s = new Statement("create_" + lower, table);
        s.args.put("if_not_exists", c.words("IF", "NOT", "EXISTS"));
        s.args.put("name", c.identifier("a " + lower + " name"));
        if (c.words("AS", "OF")) {
          s.args.put("as_of", c.asOf());
        }
        c.end();
        return s;
      }
      if (c.word("DROP") && c.peekWord(1, kind)) {
        c.next();
        c.next();
        Statement s = new Statement("drop_" + lower, table);
        s.args.put("if_exists", c.words("IF", "EXISTS"));
        s.args.put("name", c.identifier("a " + lower + " name"));
        c.end();
        return s;
      }
    }
    if (c.words("SET", "UNENFORCED", "PRIMARY", "KEY")) {
      Statement s = new Statement("set_primary_key", table);
      s.args.put("columns", c.columnList());
      c.end();
      return s;
    }
    return null; // another ALTER TABLE: Spark's
  }

  /**
   * ADD|UPDATE COLUMNS name[, name...] FROM view: the columns' values by row address from a
   * view that has {@code _rowaddr} (lance-spark's backfill); null when the statement does not
   * have that shape (Spark's {@code ADD COLUMNS name TYPE} reads it then).
   */
  private static Statement backfill(Cursor c, List<String> table) {
    String verb = c.next().text.toLowerCase(Locale.ROOT);
    c.next();
    List<String> columns = new ArrayList<>();
    try {
      do {
        columns.add(c.identifier("a column name"));
      } while (c.symbol(","));
      if (!c.words("FROM")) {
        return null;
      }
      List<String> source = c.name();
      c.end();
      Statement s = new Statement(verb + "_columns", table);
      s.args.put("columns", columns);
      s.args.put("source", String.join(".", source));
      return s;
    } catch (SyntaxError e) {
      return null;
    }
  }

  // ------------------------------------------------------------------ tokens

  enum Kind { WORD, QUOTED, STRING, NUMBER, SYMBOL, END }

  static final class Token {
    final Kind kind;
    final String text;
    final int at;

    Token(Kind kind, String text, int at) {
      this.kind = kind;
      this.text = text;
      this.at = at;
    }
  }

  static List<Token> tokenize(String sql) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char ch = sql.charAt(i);
      if (Character.isWhitespace(ch)) {
        i++;
      } else if (ch == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (ch == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int close = sql.indexOf("*/", i + 2);
        i = close < 0 ? n : close + 2;
      } else if (Character.isLetter(ch) || ch == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
          i++;
        }
        out.add(new Token(Kind.WORD, sql.substring(start, i), start));
      } else if (ch == '`') {
        StringBuilder b = new StringBuilder();
        int start = i++;
        while (true) {
          if (i >= n) {
            throw new SyntaxError("unclosed `", "`");
          }
          if (sql.charAt(i) == '`') {
            if (i + 1 < n && sql.charAt(i + 1) == '`') {
              b.append('`');
              i += 2;
              continue;
            }
            i++;
            break;
          }
          b.append(sql.charAt(i++));
        }
        out.add(new Token(Kind.QUOTED, b.toString(), start));
      } else if (ch == '\'' || ch == '"') {
        StringBuilder b = new StringBuilder();
        int start = i++;
        while (true) {
          if (i >= n) {
            throw new SyntaxError("unclosed string", String.valueOf(ch));
          }
          char x = sql.charAt(i++);
          if (x == ch) {
            break;
          }
          if (x == '\\' && i < n) {
            x = sql.charAt(i++);
          }
          b.append(x);
        }
        out.add(new Token(Kind.STRING, b.toString(), start));
      } else if (Character.isDigit(ch) || ((ch == '-' || ch == '.') && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
        int start = i++;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.'
            || ((sql.charAt(i) == '-' || sql.charAt(i) == '+') && (sql.charAt(i - 1) == 'e' || sql.charAt(i - 1) == 'E')))) {
          i++;
        }
        out.add(new Token(Kind.NUMBER, sql.substring(start, i), start));
      } else {
        out.add(new Token(Kind.SYMBOL, String.valueOf(ch), i));
        i++;
      }
    }
    while (!out.isEmpty() && out.get(out.size() - 1).text.equals(";") && out.get(out.size() - 1).kind == Kind.SYMBOL) {
      out.remove(out.size() - 1);
    }
    out.add(new Token(Kind.END, "", n));
    return out;
  }

  static final class Cursor {
    private final List<Token> tokens;
    private final String sql;
    private int at;

    Cursor(List<Token> tokens, String sql) {
      this.tokens = tokens;
      this.sql = sql;
    }

    Token peek(int ahead) {
      return tokens.get(Math.min(at + ahead, tokens.size() - 1));
    }

    Token next() {
      Token t = peek(0);
      if (t.kind != Kind.END) {
        at++;
      }
      return t;
    }

    boolean word(String w) {
      return peekWord(0, w);
    }

    boolean peekWord(int ahead, String w) {
      Token t = peek(ahead);
      return t.kind == Kind.WORD && t.text.equalsIgnoreCase(w);
    }

    boolean peekName(int ahead) {
      Kind k = peek(ahead).kind;
      return k == Kind.WORD || k == Kind.QUOTED;
    }

    /** Consumes the words if all of them come next (true), else nothing (false). */
    boolean words(String... ws) {
      for (int i = 0; i < ws.length; i++) {
        if (!peekWord(i, ws[i])) {
          return false;
        }
      }
      at += ws.length;
      return true;
    }

    void expectWord(String w) {
      if (!word(w)) {
        throw error("expected " + w);
      }
      next();
    }

    void expectSymbol(String s) {
      Token t = peek(0);
      if (t.kind != Kind.SYMBOL || !t.text.equals(s)) {
        throw error("expected '" + s + "'");
      }
      next();
    }

    boolean symbol(String s) {
      Token t = peek(0);
      if (t.kind == Kind.SYMBOL && t.text.equals(s)) {
        next();
        return true;
      }
      return false;
    }

    String identifier(String what) {
      Token t = peek(0);
      if (t.kind != Kind.WORD && t.kind != Kind.QUOTED) {
        throw error("expected " + what);
      }
      return next().text;
    }

    /** A dotted multipart name. */
    List<String> name() {
      List<String> parts = new ArrayList<>();
      parts.add(identifier("a table name"));
      while (symbol(".")) {
        parts.add(identifier("a name after '.'"));
      }
      return parts;
    }

    /** ( a[.b], ... ): nested column paths joined by dots. */
    List<String> columnList() {
      expectSymbol("(");
      List<String> columns = new ArrayList<>();
      do {
        columns.add(String.join(".", name()));
      } while (symbol(","));
      expectSymbol(")");
      return columns;
    }

    /** [WITH ( k = v, ... )]: the options, names lower-cased. */
    Map<String, Object> withOptions() {
      Map<String, Object> options = new LinkedHashMap<>();
      if (!word("WITH")) {
        return options;
      }
      next();
      expectSymbol("(");
      if (symbol(")")) {
        return options;
      }
      do {
        String key = identifier("an option name").toLowerCase(Locale.ROOT);
        expectSymbol("=");
        options.put(key, value());
      } while (symbol(","));
      expectSymbol(")");
      return options;
    }

    Object value() {
      Token t = next();
      switch (t.kind) {
        case STRING:
          return t.text;
        case NUMBER:
          return number(t.text);
        case WORD:
          if (t.text.equalsIgnoreCase("TRUE")) {
            return Boolean.TRUE;
          }
          if (t.text.equalsIgnoreCase("FALSE")) {
            return Boolean.FALSE;
          }
          return t.text;
        default:
          at--;
          throw error("expected a value (a number, TRUE/FALSE or a string)");
      }
    }

    Object number(String text) {
      String t = text.toLowerCase(Locale.ROOT);
      try {
        if (t.endsWith("l")) {
          return Long.parseLong(t.substring(0, t.length() - 1));
        }
        if (t.matches("-?\\d+")) {
          return Long.parseLong(t);
        }
        return Double.parseDouble(t.endsWith("f") || t.endsWith("d") ? t.substring(0, t.length() - 1) : t);
      } catch (NumberFormatException e) {
        throw error("not a number: " + text);
      }
    }

    /** AS OF (already read) VERSION n | BRANCH b [VERSION n] | TAG t. */
    Map<String, Object> asOf() {
      Map<String, Object> out = new LinkedHashMap<>();
      if (words("VERSION")) {
        out.put("version", version());
      } else if (words("BRANCH")) {
        out.put("branch", identifier("a branch name"));
        if (words("VERSION")) {
          out.put("version", version());
        }
      } else if (words("TAG")) {
        out.put("tag", identifier("a tag name"));
      } else {
        throw error("expected VERSION, BRANCH or TAG after AS OF");
      }
      return out;
    }

    long version() {
      Token t = next();
      if (t.kind != Kind.NUMBER || !t.text.matches("\\d+")) {
        at--;
        throw error("expected a version number");
      }
      return Long.parseLong(t.text);
    }

    void end() {
      if (peek(0).kind != Kind.END) {
        throw error("unexpected '" + peek(0).text + "'");
      }
    }

    SyntaxError error(String what) {
      Token t = peek(0);
      return new SyntaxError("lance SQL: " + what + " (position " + t.at + ")", t.kind == Kind.END ? "end of input" : t.text);
    }
  }
}
