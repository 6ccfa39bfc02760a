/** Argument definitions shared by several commands (citty). */
export const folderArg = {
  folder: {
    type: 'string',
    alias: 'f',
    description: 'project folder (holds Node_config.yaml and input/)',
    required: true,
  },
} as const;
