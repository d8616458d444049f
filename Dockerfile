# claimstep for Kubernetes: the Node server (`serve`), the CronJob sweep (`step --all`) and the
# watch relay (`relay`) from one image. The build stage compiles the CLI to JavaScript
# (`npm run build`, as the npm package) and drops the dev dependencies; the runtime stage holds
# the compiled dist/, the production node_modules and package.json: no tsx, no TypeScript, no wrangler.
#   docker build -t claimstep:0.1.0 .
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY core ./core
COPY adapters ./adapters
COPY functions ./functions
RUN npm run build && npm prune --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24.21.0-bookworm-slim
ENV NODE_ENV=production
# `claimstep serve` binds 127.0.0.1 unless told otherwise; in a container the port must be
# reachable from outside it (--host overrides this).
ENV CLAIMSTEP_HOST=0.0.0.0
WORKDIR /app
# package.json: `claimstep --version` reads it. No TypeScript sources: bin/claimstep.js runs dist/.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin/claimstep.js ./bin/claimstep.js
COPY --from=build /src/dist/core ./dist/core
COPY --from=build /src/dist/adapters ./dist/adapters
COPY --from=build /src/dist/functions ./dist/functions
# A numeric user (65532, "nonroot" by convention), so the kubelet can verify runAsNonRoot; the
# manifests in deploy/kubernetes/ set the same runAsUser/runAsGroup. The files stay root's, read-only
# to it: the container runs with a read-only root filesystem and writes nothing.
USER 65532:65532
EXPOSE 8080
# Exec form: node is the process (PID 1 gets SIGTERM), no shell is needed at run time.
ENTRYPOINT ["node", "/app/bin/claimstep.js"]
CMD ["serve"]
