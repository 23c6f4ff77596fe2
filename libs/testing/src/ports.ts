import net from 'node:net';

// Below Linux's ephemeral range (32768–60999): a port handed out here cannot be taken meanwhile as
// the local port of some outgoing connection, which is how an OS-chosen free port (listen(0)) got
// stolen between the check and the test server's own bind (EADDRINUSE).
const FIRST = 20_000;
const LAST = 32_767;
const handedOut = new Set<number>();

function available(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1, outside the ephemeral range, never the same twice. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (handedOut.has(port)) continue;
    if (await available(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${FIRST} and ${LAST}`);
}
