/**
 * The dependency rules of src/ (docs/architecture.md): http → commands → domain, adapters implement
 * ports, nothing imports in a circle. test/layers.test.ts checks them on every `npm test`; the
 * command line gives the same answer: `npx depcruise src`.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: two modules that cannot be read, tested or loaded one without the other.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain decides from what it is given: no database, no HTTP, no queue, no other layer of ours (an event type of the store port aside).',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: ['^src/domain/', '^src/ports/event-store\\.ts$'] },
    },
    {
      name: 'commands-below-their-drivers',
      comment: 'Commands are called by the HTTP routes, the jobs and the process managers, never the other way round.',
      severity: 'error',
      from: { path: '^src/commands/' },
      to: { path: '^src/(http|jobs|process-managers|projections/runner|workers)' },
    },
    {
      name: 'ports-are-interfaces',
      comment: 'A port names what the application needs; it knows no adapter and no layer above it.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/', pathNot: ['^src/ports/', '^src/domain/'] },
    },
    {
      name: 'read-models-below-their-readers',
      comment: 'The read-model queries are read by commands, routes, jobs and process managers; they call none of them.',
      severity: 'error',
      from: { path: '^src/read-models/' },
      to: { path: '^src/(http|commands|jobs|process-managers|projections/runner|workers|services|application)' },
    },
    {
      name: 'adapters-below-the-application',
      comment: 'Adapters implement ports for the layers above; they call none of them.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/(http|commands|read-models|jobs|process-managers|projections|workers|services|application)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
