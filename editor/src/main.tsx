import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ReactFlowProvider } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './styles.css';
import { Api, takeTokenFromLocation } from './api/client';
import { App } from './App';

const root = createRoot(document.getElementById('root')!);
const api = new Api(takeTokenFromLocation());
api
  .ops()
  .then((opsDoc) =>
    root.render(
      <StrictMode>
        <ReactFlowProvider>
          <App api={api} opsDoc={opsDoc} />
        </ReactFlowProvider>
      </StrictMode>,
    ),
  )
  .catch((e: Error) => root.render(<div className="nf-fatal">Cannot reach the nodeflow server: {e.message}</div>));
