/** The URL group of a tool: which base URL (BASE_URL_TOOLS, _TOKEN, _SMM, _TRANSFERS) serves its route. */
export type ToolGroup = 'tools' | 'token' | 'smm' | 'transfers';
