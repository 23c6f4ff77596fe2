import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ArrivingRequests {
  /**
   * Ends every connection whose request has not fully arrived (its headers or its body still coming)
   * the way Node ends one too slow to arrive: the server's `clientError` with `ERR_HTTP_REQUEST_TIMEOUT`,
   * which the gateway answers `408`. Requests that arrived and are being answered are left alone.
   */
  end(): void;
}

/**
 * The requests still arriving on a server's connections. Node times them out (`requestTimeout`) only
 * while the server listens: once it closes, a client that stopped sending holds the close for as long
 * as it keeps its connection, so a drain needs to end them itself.
 */
export function trackArrivingRequests(server: Server): ArrivingRequests {
  const open = new Set<Socket>();
  const exchanges = new WeakMap<Socket, { request: IncomingMessage; response: ServerResponse }>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    exchanges.set(request.socket, { request, response });
  });
  return {
    end() {
      for (const socket of open) {
        const exchange = exchanges.get(socket);
        // Its request arrived and its answer is on the way: the drain waits for it.
        if (exchange?.request.complete && !exchange.response.writableEnded) continue;
        const error = Object.assign(new Error('the request did not arrive before the shutdown'), {
          code: 'ERR_HTTP_REQUEST_TIMEOUT',
        });
        server.emit('clientError', error, socket);
      }
    },
  };
}
