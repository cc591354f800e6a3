package lancens.tests;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Starts a Hive Metastore 3.1 (tests/services/hms3.py): {@code HiveMetaStore.main(args)}, after
 * making the transaction tables its lock API needs when {@code -Dlancens.txn.db=JDBC_URL} names
 * the metastore database.
 *
 * DataNucleus' schema (autoCreateAll) lacks the transaction tables (TXNS, HIVE_LOCKS,
 * NEXT_LOCK_ID...), which schematool's hive-txn-schema script makes on a production metastore;
 * the Maven jars do not carry that script.  Hive's own {@code TxnDbUtil.prepDb} makes the same
 * tables (Hive's tests use it; it ignores tables that already exist).  Hive 3 would call it
 * itself under {@code hive.in.test}, but that switch also turns on test-only behaviour (every
 * client without the TEST capability is refused by get_table), so it is called here instead.
 */
public final class Hms3Main {
  private Hms3Main() {}

  public static void main(String[] args) throws Throwable {
    String url = System.getProperty("lancens.txn.db");
    if (url != null && !url.isEmpty()) {
      Configuration conf = MetastoreConf.newMetastoreConf();
      MetastoreConf.setVar(conf, MetastoreConf.ConfVars.CONNECT_URL_KEY, url);
      TxnDbUtil.prepDb(conf);
    }
    HiveMetaStore.main(args);
  }
}
