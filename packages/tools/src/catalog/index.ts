/**
 * The tool set, in the order a model meets it: orient, find, read, change,
 * look back, keep files open, run commands.
 *
 * @module
 */

import type { AnyToolDefinition } from '../definition.ts';
import { bufferDiff, closeFile, fileStatus, openFile, reloadFile, saveFile, undoBufferEdit } from './buffers.ts';
import { readCommandOutput, runCommand } from './commands.ts';
import { applyPatch, createFile, deleteFile, editLines, renameFile, replace, writeFile } from './editing.ts';
import { checkConflicts, getDiff, getFileHistory, rollback, undo } from './history.ts';
import { getExcerpt, getFileMetadata, getOutline, getRelatedFiles, getSymbol, projectOverview, readFile, readLines, summarizeFile } from './reading.ts';
import { findSymbol, glob, grep, listFiles } from './searching.ts';

/** Every ctxfs tool. */
export const TOOLS: readonly AnyToolDefinition[] = [
  projectOverview,
  listFiles,
  glob,
  grep,
  findSymbol,
  readFile,
  readLines,
  getExcerpt,
  getOutline,
  getSymbol,
  getRelatedFiles,
  summarizeFile,
  getFileMetadata,
  writeFile,
  createFile,
  replace,
  editLines,
  applyPatch,
  deleteFile,
  renameFile,
  getDiff,
  getFileHistory,
  rollback,
  undo,
  checkConflicts,
  openFile,
  fileStatus,
  bufferDiff,
  reloadFile,
  saveFile,
  undoBufferEdit,
  closeFile,
  runCommand,
  readCommandOutput,
];

/** Tools that only read: the set for a read-only session. */
export const READ_TOOLS: readonly AnyToolDefinition[] = TOOLS.filter((t) => t.annotations.readOnlyHint);

export {
  applyPatch,
  bufferDiff,
  checkConflicts,
  closeFile,
  createFile,
  deleteFile,
  editLines,
  fileStatus,
  findSymbol,
  getDiff,
  getExcerpt,
  getFileHistory,
  getFileMetadata,
  getOutline,
  getRelatedFiles,
  getSymbol,
  glob,
  grep,
  listFiles,
  openFile,
  projectOverview,
  readCommandOutput,
  readFile,
  readLines,
  reloadFile,
  renameFile,
  replace,
  rollback,
  runCommand,
  saveFile,
  summarizeFile,
  undo,
  undoBufferEdit,
  writeFile,
};
