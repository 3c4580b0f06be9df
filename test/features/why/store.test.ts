/** The WhyStore contract (store.contract.ts) against the files (FileWhyStore). */
import { describe } from 'node:test';
import { FileWhyStore } from '../../../src/features/why/store.js';
import { fileHarness } from '../../helpers/stores.js';
import { whyStoreContract } from './store.contract.js';

const files = () => fileHarness(async (dir) => new FileWhyStore(dir));

describe('FileWhyStore meets the WhyStore contract', () => whyStoreContract(files, files));
