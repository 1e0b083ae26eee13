// A TCP port free on 127.0.0.1 right now, for test harnesses that start servers (code-server in
// test/e2e/lib/host.mjs, slurmctld/slurmd in scripts/slurm-cluster.mjs).
import net from "node:net";

/** Resolves to a port number (1..65535) the OS just gave a listener on 127.0.0.1 and closed again; rejects with the listen error. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
