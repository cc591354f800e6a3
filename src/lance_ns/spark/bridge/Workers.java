package lancens.spark;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.SparkEnv;

/**
 * A per-JVM pool of {@code python -m lance_ns.spark.bridge_worker}
 * processes, one per concurrent task at most, kept for the JVM's lifetime
 * (a worker exits when its stdin closes).
 *
 * <p>Protocol on the worker's stdin/stdout: a request is one JSON frame (a
 * 4-byte big-endian length, then UTF-8 JSON); a reply is one JSON frame,
 * either a result or {@code {"error": {"type", "code", "message"}}}.  A
 * {@code read} reply is followed by an Arrow IPC stream and a trailer frame,
 * so an error in the middle of a scan still arrives as an error; a {@code write}
 * request is followed by the task's rows as an Arrow IPC stream, then answered.
 */
final class Workers {
  private Workers() {}

  /** The bridge's one JSON mapper (its frames, and the stream offsets of {@link LanceStream}). */
  static final ObjectMapper JSON = new ObjectMapper();
  private static final ArrayDeque<Worker> IDLE = new ArrayDeque<>();
  private static final List<Worker> ALL = new ArrayList<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (IDLE) {
        for (Worker w : ALL) {
          w.process.destroy();
        }
      }
    }));
  }

  /** A request-reply round trip on a pooled worker. */
  static Map<String, Object> call(Map<String, Object> request) {
    Worker w = borrow();
    try {
      w.send(request);
      Map<String, Object> reply = w.reply();
      release(w);
      return reply;
    } catch (WorkerError e) {
      release(w); // the worker answered; it is still in step
      throw e;
    } catch (IOException | RuntimeException e) {
      discard(w);
      throw unchecked(e);
    }
  }

  /** {@code e} as is, or an I/O error wrapped (Spark's reader methods throw only IOException). */
  static RuntimeException unchecked(Exception e) {
    return e instanceof RuntimeException ? (RuntimeException) e : new UncheckedIOException((IOException) e);
  }

  static Worker borrow() {
    synchronized (IDLE) {
      while (!IDLE.isEmpty()) {
        Worker w = IDLE.pop();
        if (w.process.isAlive()) {
          return w;
        }
        ALL.remove(w);
      }
    }
    Worker w = new Worker(pythonExecutable());
    synchronized (IDLE) {
      ALL.add(w);
    }
    return w;
  }

  static void release(Worker w) {
    synchronized (IDLE) {
      if (w.process.isAlive() && !w.discarded) {
        IDLE.push(w);
      }
    }
  }

  static void discard(Worker w) {
    synchronized (IDLE) {
      w.discarded = true;
      ALL.remove(w);
    }
    w.process.destroy();
  }

  /** The PySpark driver's interpreter, when register() told this JVM (see LanceProvider). */
  static volatile String driverPython;

  /**
   * The interpreter Spark runs Python with ({@code spark.pyspark.python},
   * {@code PYSPARK_PYTHON}), else the driver's, and only then {@code python3}
   * from PATH: a venv's workers must not silently run another Python.
   */
  static String pythonExecutable() {
    SparkEnv env = SparkEnv.get();
    if (env != null) {
      String conf = env.conf().get("spark.pyspark.python", null);
      if (conf != null && !conf.isEmpty()) {
        return conf;
      }
    }
    String fromEnv = System.getenv("PYSPARK_PYTHON");
    if (fromEnv != null && !fromEnv.isEmpty()) {
      return fromEnv;
    }
    return driverPython != null ? driverPython : "python3";
  }

  /** An error the worker reported: the lance_ns error type, its code and message. */
  static final class WorkerError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String type;
    final int code;

    WorkerError(String type, int code, String message) {
      super(type + " (code " + code + "): " + message);
      this.type = type;
      this.code = code;
    }
  }

  static final class Worker {
    final Process process;
    private final DataOutputStream out;
    private final DataInputStream in;
    volatile boolean discarded;

    Worker(String python) {
      ProcessBuilder builder = new ProcessBuilder(python, "-m", "lance_ns.spark.bridge_worker");
      builder.redirectError(ProcessBuilder.Redirect.INHERIT);
      try {
        process = builder.start();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start the lance bridge worker with " + python, e);
      }
      out = new DataOutputStream(new BufferedOutputStream(process.getOutputStream()));
      in = new DataInputStream(new BufferedInputStream(process.getInputStream(), 1 << 16));
    }

    void send(Map<String, Object> request) throws IOException {
      byte[] body = JSON.writeValueAsBytes(request);
      out.writeInt(body.length);
      out.write(body);
      out.flush();
    }

    /** The next reply frame; a reported error is thrown as {@link WorkerError}. */
    Map<String, Object> reply() throws IOException {
      int length;
      try {
        length = in.readInt();
      } catch (java.io.EOFException e) {
        throw new IOException("the lance bridge worker exited (its stderr is in the Spark log)", e);
      }
      byte[] body = new byte[length];
      in.readFully(body);
      Map<String, Object> reply = JSON.readValue(body, new TypeReference<Map<String, Object>>() {});
      Object error = reply.get("error");
      if (error instanceof Map) {
        Map<?, ?> e = (Map<?, ?>) error;
        throw new WorkerError(
            String.valueOf(e.get("type")), ((Number) e.get("code")).intValue(), String.valueOf(e.get("message")));
      }
      return reply;
    }

    /** The stream after a request, for an Arrow writer that must not close the pipe. */
    OutputStream sink() {
      return new FilterOutputStream(out) {
        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          out.write(b, off, len);
        }

        @Override
        public void close() {}
      };
    }

    void flush() throws IOException {
      out.flush();
    }

    /** The stream after a reply, for an Arrow reader that must not close the pipe. */
    InputStream body() {
      return new FilterInputStream(in) {
        @Override
        public void close() {}
      };
    }
  }
}
