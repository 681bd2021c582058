import type { StepDeps } from '../../runtime/step-deps';
import { createDebugAnalysisCode, createWriteAnalysisCode } from './code';
import { createExtractFindings } from './findings';
import { createFinishDataScience } from './finish';
import { createPlanAnalysis } from './plan';
import { createRunAnalysis } from './run';
import { createSummariseAnalysis } from './summary';

/** The Data Science agent's stages, one activity each, sequenced by the workflow (workflows/data-science.ts). */
export function createDataScienceActivities(deps: StepDeps) {
  return {
    planAnalysis: createPlanAnalysis(deps),
    writeAnalysisCode: createWriteAnalysisCode(deps),
    debugAnalysisCode: createDebugAnalysisCode(deps),
    runAnalysis: createRunAnalysis(deps),
    summariseAnalysis: createSummariseAnalysis(deps),
    extractFindings: createExtractFindings(deps),
    finishDataScience: createFinishDataScience(deps),
  };
}
