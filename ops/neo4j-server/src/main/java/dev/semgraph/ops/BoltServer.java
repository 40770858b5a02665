package dev.semgraph.ops;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.graphdb.config.Setting;

/**
 * Starts Neo4j 5 embedded with its Bolt connector on a loopback port, auth off and
 * transaction memory limits unlimited. Used as the graph server in tests and the local
 * stack (Memgraph cannot be installed on the build machines).
 *
 * Usage: BoltServer DATA_DIR PORT [HOST [SETTING=VALUE ...]]
 * Prints "READY bolt://HOST:PORT" once a write transaction has committed.
 *
 * SETTING=VALUE pairs are Neo4j settings applied last, over the defaults above; tests use
 * them to run a dedicated server with a small transaction memory limit, for example
 * {@code db.memory.transaction.max=8m} (Neo4j community has no dbms.setConfigValue).
 */
public final class BoltServer {
    private BoltServer() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: BoltServer DATA_DIR PORT [HOST]");
            System.exit(2);
        }
        Path dataDir = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String host = args.length > 2 ? args[2] : "127.0.0.1";
        Map<String, String> extra = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("not a SETTING=VALUE pair: " + args[i]);
                System.exit(2);
            }
            extra.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Files.createDirectories(dataDir);

        // parsed and validated by Neo4j itself: an unknown name or bad value fails the start
        Config parsed = Config.newBuilder().setRaw(extra).build();
        Map<Setting<?>, Object> overrides = new HashMap<>();
        for (String name : extra.keySet()) {
            Setting<Object> setting = parsed.getSetting(name);
            overrides.put(setting, parsed.get(setting));
        }

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(dataDir)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, 0L)
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, 0L)
                .setConfig(GraphDatabaseSettings.transaction_timeout, java.time.Duration.ZERO)
                .setConfig(overrides)
                .build();

        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stop.countDown();
        }, "semgraph-bolt-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        try (Transaction tx = db.beginTx()) {
            tx.execute("MERGE (h:SemgraphHealth {id: 1}) SET h.started = timestamp()");
            tx.commit();
        }
        System.out.println("READY bolt://" + host + ":" + port);
        System.out.flush();
        stop.await();
    }
}
