import { AUTHORIZATION_METADATA_KEY, deadline, outgoingMetadata, unary } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { ClientGrpc } from '@nestjs/microservices';
import { Observable } from 'rxjs';

/** Nest's generated client methods pass the extra call options argument through to grpc-js. */
type Method<Req, Res> = (request: Req, metadata: Metadata, options: ReturnType<typeof deadline>) => Observable<Res>;

type RequestOf<M> = M extends (request: infer Req, ...rest: never[]) => Observable<unknown> ? Req : never;
type ResponseOf<M> = M extends (...args: never[]) => Observable<infer Res> ? Res : never;

/**
 * One backend service as the gateway calls it: every call carries the request id, the caller's
 * access token when there is one, and a deadline; failures become DomainErrors (503 when the
 * backend is unreachable or slow).
 */
export class GrpcBackend<Service extends object> {
  private service?: Service;

  constructor(
    readonly name: string,
    private readonly client: ClientGrpc,
    private readonly serviceName: string,
    private readonly deadlineMs: number,
  ) {}

  call<Name extends keyof Service>(
    name: Name,
    request: RequestOf<Service[Name]>,
    options: { accessToken?: string; deadlineMs?: number } = {},
  ): Promise<ResponseOf<Service[Name]>> {
    this.service ??= this.client.getService<Service>(this.serviceName);
    const method = (this.service[name] as Method<RequestOf<Service[Name]>, ResponseOf<Service[Name]>>).bind(
      this.service,
    );
    const metadata = outgoingMetadata(
      options.accessToken ? { [AUTHORIZATION_METADATA_KEY]: `Bearer ${options.accessToken}` } : {},
    );
    return unary(this.name, () => method(request, metadata, deadline(options.deadlineMs ?? this.deadlineMs)));
  }
}
