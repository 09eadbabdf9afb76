import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';

/** Options of {@link ControlBus}. */
export interface ControlBusOptions {
  /** A connection in subscriber mode, used only by the bus. */
  subscriber: Redis;
  /** A command connection to publish on. */
  publisher: Redis;
  logger: Logger;
}

type Handler = (message: string) => void | Promise<void>;

/**
 * Process-to-process control messages over Redis pub/sub: configuration
 * reloads and key revocations reach every API and worker process. ioredis
 * re-subscribes after a reconnect; what was published while a process was
 * disconnected is lost, so users of the bus also keep a TTL or a generation
 * counter to catch up (see {@link ControlBus.onReconnect}).
 */
export class ControlBus {
  /** Unique per process, so a sender can ignore its own broadcast. */
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<string, Handler[]>();
  private readonly reconnectListeners: Array<() => void> = [];
  private readonly options: ControlBusOptions;
  private everReady = false;
  private readonly subscribedChannels = new Set<string>();

  constructor(options: ControlBusOptions) {
    this.options = options;
    options.subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    options.subscriber.on('ready', () => {
      if (this.everReady) for (const listener of this.reconnectListeners) listener();
      this.everReady = true;
    });
    if (options.subscriber.status === 'ready') this.everReady = true;
  }

  private dispatch(channel: string, message: string): void {
    for (const handler of this.handlers.get(channel) ?? []) {
      Promise.resolve()
        .then(() => handler(message))
        .catch((err: Error) => this.options.logger.error({ err, channel }, 'control message handler failed'));
    }
  }

  /**
   * Registers a handler. The SUBSCRIBE itself is sent in the background: while
   * Redis is down it waits in ioredis's offline queue, so a start never blocks.
   */
  subscribe(channel: string, handler: Handler): void {
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
    if (list.length > 1) return;
    this.options.subscriber.subscribe(channel).then(
      () => this.subscribedChannels.add(channel),
      (err: Error) => this.options.logger.warn({ err, channel }, 'cannot subscribe to control channel'),
    );
  }

  /** True once this process listens on `channel`. */
  isSubscribed(channel: string): boolean {
    return this.subscribedChannels.has(channel);
  }

  /** Publishes; resolves with the number of subscribed connections (this process included). */
  async publish(channel: string, message: string): Promise<number> {
    const publisher = this.options.publisher;
    if (!publisher.isCluster) return publisher.publish(channel, message);
    // A cluster's PUBLISH reaches every node's subscribers but counts only those of the node that took it.
    const nodes = (publisher as unknown as Cluster).nodes('all');
    const [, counts] = await Promise.all([
      publisher.publish(channel, message),
      Promise.all(nodes.map((node) => node.pubsub('NUMSUB', channel))),
    ]);
    return counts.reduce((sum: number, reply) => sum + Number((reply as [string, number])[1]), 0);
  }

  /** Called each time the subscriber reconnects after having been connected. */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  async close(): Promise<void> {
    this.options.subscriber.disconnect();
  }
}
