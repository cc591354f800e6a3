package lancens.tests;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The test metastore's filesystem for {@code s3://} and {@code s3a://} locations
 * (tests/services/hms3.py): every path is an existing, empty directory, and nothing is ever
 * made, written or deleted.
 *
 * The metastore resolves the filesystem of every table and database location it is given
 * (and would make a missing directory, then delete it if the create fails); Hadoop 3.1 ships
 * no S3 filesystem in hadoop-common.  The tests' Lance data lives wherever the client writes
 * it (moto's S3, or storage that is unreachable on purpose): the metastore only stores the
 * path.  Reading or writing a file through this filesystem fails.
 */
public class PathOnlyFileSystem extends FileSystem {
  private URI uri;
  private Path workingDir = new Path("/");

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    setConf(conf);
    uri = URI.create(name.getScheme() + "://" + (name.getAuthority() == null ? "" : name.getAuthority()));
  }

  @Override
  public String getScheme() {
    return uri == null ? "s3" : uri.getScheme();
  }

  @Override
  public URI getUri() {
    return uri;
  }

  @Override
  public FileStatus getFileStatus(Path f) {
    return new FileStatus(0, true, 1, 0, 0, makeQualified(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) {
    return new FileStatus[0];
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) {
    return true;
  }

  @Override
  public boolean delete(Path f, boolean recursive) {
    return false;
  }

  @Override
  public boolean rename(Path src, Path dst) {
    return false;
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    throw new FileNotFoundException(f + ": the test metastore does not read " + getScheme() + ":// files");
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    throw new IOException(f + ": the test metastore does not write " + getScheme() + ":// files");
  }

  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress) throws IOException {
    throw new IOException(f + ": the test metastore does not write " + getScheme() + ":// files");
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = dir;
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }
}
