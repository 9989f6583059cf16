# The service image the scaled-out docker-compose.yml runs (one image, the role chosen by the command).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --omit=dev
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
ENV NODE_ENV=production PORT=3000
EXPOSE 3000
CMD ["npm", "start"]
