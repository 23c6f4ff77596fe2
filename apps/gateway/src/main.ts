import 'reflect-metadata';

import { runMain } from '@acct/grpc';

import { loadGatewayConfig } from './config';
import { startGateway } from './start-gateway';

runMain('gateway', async () => {
  await startGateway(loadGatewayConfig());
});
