import { Module } from '@nestjs/common';

import { GatewayCaller } from './gateway-caller';

/** Who may call auth with what: the gateway's service identity. */
@Module({
  providers: [GatewayCaller],
  exports: [GatewayCaller],
})
export class CallersModule {}
