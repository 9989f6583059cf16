# The service image the scaled-out docker-compose.yml runs (one image, the role chosen by the command).
FROM node:20-bookworm-slim
WORKDIR /app
# Everything `npm ci` builds from: its prepare script builds the dashboard (web/) from the API's own
# schemas (src/, scripts/) with the dev dependencies, which are dropped afterwards.
COPY package.json package-lock.json tsconfig.json ./
COPY packages ./packages
COPY src ./src
COPY scripts ./scripts
COPY web ./web
RUN npm ci && npm prune --omit=dev && npm cache clean --force
ENV NODE_ENV=production PORT=3000
EXPOSE 3000
# node as the container's first process, no npm or shell in front of it: a stop's SIGTERM reaches the
# service, which drains its requests and hands back its claims before it exits.
CMD ["node", "--max-semi-space-size=32", "--import", "tsx", "src/main.ts", "all"]
