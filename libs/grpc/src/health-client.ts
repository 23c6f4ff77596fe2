import { HEALTH_PROTO } from './proto';
import { callRaw, createRawClient, RawClient } from './raw-client';

type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

/** A plain `grpc.health.v1.Health` client, for probes that must not depend on Nest. */
export class HealthClient {
  constructor(private readonly client: RawClient) {}

  async check(timeoutMs: number, service = ''): Promise<ServingStatus> {
    const response = await callRaw<{ service: string }, { status?: ServingStatus }>(
      this.client,
      'check',
      { service },
      timeoutMs,
    );
    return response?.status ?? 'UNKNOWN';
  }

  close() {
    this.client.close();
  }
}

export function createHealthClient(address: string, configuredProtoDir?: string): HealthClient {
  return new HealthClient(createRawClient(HEALTH_PROTO, 'grpc.health.v1.Health', address, configuredProtoDir));
}
