# claimstep for Kubernetes: the Node server (`serve`), the CronJob sweep (`step --all`) and the
# watch relay (`relay`) from one image. The CLI is bundled with esbuild (node_modules packages
# stay external), so the runtime stage holds only production dependencies: no tsx, no wrangler.
#   docker build -t claimstep:0.1.0 .
FROM node:20.20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY core ./core
COPY adapters ./adapters
COPY functions ./functions
RUN printf 'import { main } from "./functions/cli.ts";\nprocess.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });\n' \
  | npx esbuild --bundle --platform=node --format=esm --target=node20 --packages=external \
      --sourcefile=claimstep.ts --loader=ts --outfile=dist/claimstep.mjs

FROM node:20.20-bookworm-slim
ENV NODE_ENV=production
# `claimstep serve` binds 127.0.0.1 unless told otherwise; in a container the port must be
# reachable from outside it (--host overrides this).
ENV CLAIMSTEP_HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist/claimstep.mjs ./claimstep.mjs
USER node
EXPOSE 8080
ENTRYPOINT ["node", "/app/claimstep.mjs"]
CMD ["serve"]
