package org.apache.hadoop.hive.common.auth;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransportException;

/**
 * Test-only stand-in placed before the Hive jars on the metastore's classpath.
 * Hive Metastore 2.3 always asks for a server socket on every interface (host
 * null, no configuration key); the tests must listen on loopback only, so a
 * null/empty host binds 127.0.0.1.  The metastore server calls nothing else of
 * this class unless SSL is on, which the tests never enable.
 */
public final class HiveAuthUtils {
  private HiveAuthUtils() {}

  public static TServerSocket getServerSocket(String host, int port) throws TTransportException {
    InetSocketAddress addr = (host == null || host.isEmpty())
        ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
        : new InetSocketAddress(host, port);
    return new TServerSocket(addr);
  }
}
