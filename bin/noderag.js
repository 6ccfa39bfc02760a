#!/usr/bin/env node
// Entry point of the `noderag` command: the compiled CLI lives in dist/.
import '../dist/cli/main.js';
