package org.apache.hadoop.hive.metastore.utils;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import javax.security.auth.login.LoginException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * Test-only stand-in placed before the Hive 3.1 jars on the metastore's class path
 * (tests/services/hms3.py).  Hive Metastore 3.1 has no bind-host setting: its server asks
 * {@code getServerSocket(null, port)}, a socket on every interface.  The tests must listen
 * on loopback only, so a null or empty host binds 127.0.0.1.
 *
 * A plain (no SASL, no SSL) metastore server calls only getUGI, getUser and getServerSocket;
 * those behave as Hive 3.1.3's own.  The Kerberos, delegation-token and SSL methods exist so
 * that the class links, and refuse: the tests never turn those on.
 */
public class SecurityUtils {
  private SecurityUtils() {}

  public static UserGroupInformation getUGI() throws LoginException, IOException {
    String doAs = System.getenv("HADOOP_USER_NAME");
    if (doAs != null && doAs.length() > 0) {
      return UserGroupInformation.createProxyUser(doAs, UserGroupInformation.getLoginUser());
    }
    return UserGroupInformation.getCurrentUser();
  }

  public static String getUser() throws IOException {
    try {
      return getUGI().getUserName();
    } catch (LoginException e) {
      throw new IOException(e);
    }
  }

  public static TServerSocket getServerSocket(String host, int port) throws TTransportException {
    InetSocketAddress addr = (host == null || host.isEmpty())
        ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
        : new InetSocketAddress(host, port);
    return new TServerSocket(addr);
  }

  private static UnsupportedOperationException notInTests(String what) {
    return new UnsupportedOperationException(what + " is not available in the lance-ns test metastore");
  }

  public static void setZookeeperClientKerberosJaasConfig(String principal, String keyTabFile) throws IOException {
    throw notInTests("Kerberos");
  }

  public static String getTokenStrForm(String tokenSignature) throws IOException {
    throw notInTests("delegation tokens");
  }

  public static void setTokenStr(UserGroupInformation ugi, String tokenStr, String tokenService) throws IOException {
    throw notInTests("delegation tokens");
  }

  public static String getTokenStoreClassName(Configuration conf) {
    throw notInTests("delegation tokens");
  }

  public static TServerSocket getServerSSLSocket(String hiveHost, int portNum, String keyStorePath,
      String keyStorePassWord, List<String> sslVersionBlacklist) throws TTransportException {
    throw notInTests("SSL");
  }

  public static TTransport getSSLSocket(String host, int port, int loginTimeout, String trustStorePath,
      String trustStorePassWord) throws TTransportException {
    throw notInTests("SSL");
  }
}
