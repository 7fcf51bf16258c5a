# The merchant kit as a small, non-root image. Built elsewhere (no Docker engine runs where it is developed).
# Node 24 LTS in both stages. The `node` devDependency (the Node 24 npm scripts run on where the machine's
# Node is older) comes along in the build stage's install only: the image's own Node runs the kit.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# tsc, then the demo shop's browser script bundled into dist/ (esbuild): the image below carries
# neither its TypeScript sources nor esbuild, and reads the bundle as it starts.
RUN npm run build

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# The embedded sandbox's state (GATEWAY_SANDBOX_STATE, var/sandbox-state.json): writable by the app only.
RUN mkdir -p /app/var && chown node:node /app/var
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
