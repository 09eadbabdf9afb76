import { parentPort, workerData } from 'node:worker_threads';

/**
 * The worker thread of {@link OnnxEmbedder} (`onnx-embedder.ts`): loads a
 * feature-extraction pipeline of @huggingface/transformers from a local folder
 * and embeds batches with mean pooling and L2 normalization, off the API's
 * event loop. Messages in: `{id, texts}`; out: `{type:'ready'}` once,
 * `{type:'failed', message}` if the model cannot load, then per batch
 * `{id, dims, data}` (a transferred Float32Array) or `{id, error}`.
 */

/** What the main thread passes as `workerData`. */
export interface OnnxThreadConfig {
  model: string;
  localModelPath: string;
  allowRemoteModels: boolean;
  dtype: string;
  /** ONNX Runtime intra-op threads; 0 lets it choose. */
  threads: number;
}

interface FeatureOutput {
  dims: number[];
  data: Float32Array;
}
type Extractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<FeatureOutput>;

const port = parentPort;
if (!port) throw new Error('onnx-embedder-thread.ts must run as a worker thread');
const config = workerData as OnnxThreadConfig;

async function load(): Promise<Extractor> {
  const transformers = await import('@huggingface/transformers');
  const { env, pipeline } = transformers;
  env.localModelPath = config.localModelPath.endsWith('/') ? config.localModelPath : `${config.localModelPath}/`;
  env.allowLocalModels = true;
  env.allowRemoteModels = config.allowRemoteModels;
  const options: Record<string, unknown> = { dtype: config.dtype, device: 'cpu' };
  if (config.threads > 0) options.session_options = { intraOpNumThreads: config.threads, interOpNumThreads: 1 };
  const extractor = await pipeline('feature-extraction', config.model, options);
  return extractor as unknown as Extractor;
}

try {
  const extractor = await load();
  const embed = async (message: { id: number; texts: string[] }): Promise<void> => {
    try {
      const output = await extractor(message.texts, { pooling: 'mean', normalize: true });
      const data = Float32Array.from(output.data);
      port.postMessage({ id: message.id, dims: output.dims.at(-1), data }, [data.buffer]);
    } catch (err) {
      port.postMessage({ id: message.id, error: (err as Error).message });
    }
  };
  port.on('message', (message: { id: number; texts: string[] }) => void embed(message));
  port.postMessage({ type: 'ready' });
} catch (err) {
  port.postMessage({ type: 'failed', message: (err as Error).message });
}
