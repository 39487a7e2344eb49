import { createContext, useContext } from 'react';
import type { OpIndex } from '../schema/types';

export const OpsContext = createContext<OpIndex>(new Map());
export const useOps = () => useContext(OpsContext);
