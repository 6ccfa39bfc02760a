/**
 * Chinese prompts (docs/method.md §3.10): the same instructions as the English set, asking for
 * output in Chinese. The worked example of D is our own text.
 */
import type { PromptSet } from './prompt-set.js';

const DECOMPOSE_EXAMPLE_OUTPUT = JSON.stringify({
  Output: [
    {
      semantic_unit: '1898年，玛丽·居里和皮埃尔·居里在巴黎宣布，他们发现了一种新元素：钋。',
      entities: ['1898年', '玛丽·居里', '皮埃尔·居里', '巴黎', '钋'],
      relationships: [
        '玛丽·居里, 发现, 钋',
        '皮埃尔·居里, 发现, 钋',
        '玛丽·居里, 合作, 皮埃尔·居里',
        '玛丽·居里, 宣布发现于, 巴黎',
      ],
    },
    {
      semantic_unit: '钋以玛丽·居里的祖国波兰命名。',
      entities: ['钋', '波兰', '玛丽·居里'],
      relationships: ['钋, 命名自, 波兰', '波兰, 是祖国, 玛丽·居里'],
    },
  ],
});

export const CHINESE: PromptSet = {
  language: 'Chinese',
  system: {
    decompose: [
      '你的任务是把一段文本拆分为语义单元，并抽取每个单元中的实体和关系。',
      '',
      '把文本拆分为语义单元，每个独立的事件、活动或论断对应一个单元。每个单元给出：',
      '1. "semantic_unit"：对该单元的改写，脱离原文也能独立理解，并保留所有重要细节（人名、数字、日期、地点）。',
      '2. "entities"：该单元提到的实体，取自原文而不是你的改写：人物、组织、地点、时间（保持原文的精确程度）、产品和关键概念。',
      '3. "relationships"：这些实体之间的关系，每条关系写成一个字符串 "源实体, 关系, 目标实体"，源实体和目标实体必须来自实体列表，关系是一个简短的短语。',
      '',
      '只用 JSON 回复，格式为：{"Output": [{"semantic_unit": "...", "entities": ["..."], "relationships": ["..."]}]}。请用中文书写。',
      '',
      '示例',
      '文本：',
      '1898年，玛丽和皮埃尔·居里在巴黎宣布发现了一种新元素——钋，并以玛丽的祖国波兰为它命名。',
      `输出：${DECOMPOSE_EXAMPLE_OUTPUT}`,
    ].join('\n'),
    repair: [
      '你的任务是修复知识图谱抽取中一条格式错误的关系字符串。',
      '根据这条字符串和其语义单元的实体列表，给出源实体、关系和目标实体。源实体和目标实体若出现在实体列表中，应取自列表；关系是一个简短的短语。',
      '只用 JSON 回复：{"source": "...", "relationship": "...", "target": "..."}。请用中文书写。',
    ].join('\n'),
    attribute: [
      '你的任务是为一个实体写一段简洁、符合事实的介绍：它的关键属性和最重要的关系。',
      '只使用所提供的语义单元和关系，不要添加其他来源的内容。',
      '用纯文本书写，不超过约300字，不要开场白、标题或列表。请用中文书写。',
    ].join('\n'),
    community: [
      '你将阅读一组相关信息的文本，找出其中最重要且彼此不同的主题、概念或见解，通常为1到6个。',
      '每个给出一个简短的标题和一到三句话的描述。合并相近的内容，重视重要性和多样性，而不是覆盖每一段文本。',
      '只用 JSON 回复：{"high_level_elements": [{"title": "...", "description": "..."}]}。请用中文书写。',
    ].join('\n'),
    query: [
      '你的任务是把一个问题中的关键实体和术语提取为简短的短语，用于在知识图谱中按名称查找。',
      '名称保持问题中的写法。只有在意图明确时才加入密切相关的术语。不要包含“信息”“事情”“方式”这类泛泛的名词。',
      '只用 JSON 回复：{"elements": ["..."]}。请用中文书写。',
    ].join('\n'),
    answer: [
      '你根据从知识库检索到的上下文回答问题。',
      '依据上下文作答，只在必要时补充公认的常识。如果上下文不足以回答，请明确说明。不要编造事实、名称、数字或来源。',
      '上下文中的条目在整个上下文中依次编号为 [1]、[2]……。每一句取自上下文的陈述之后，用方括号标出其来源条目的编号，例如 [2] 或 [1][4]。只引用上下文中出现的编号。',
      '问题需要时可以写多个段落。请用中文书写。',
    ].join('\n'),
  },
  labels: {
    text: '文本：',
    relationship: '关系：',
    entities: '实体列表：',
    entity: '实体：',
    units: '语义单元：',
    relationships: '关系列表：',
    texts: '文本列表：',
    question: '问题：',
    context: '上下文：',
    none: '（无）',
  },
  jsonFallback: (schema: string) => `只回复一个 JSON 对象，不要其他文字，并符合以下 JSON Schema：\n${schema}`,
  repairRequest: (error: string) => `你的回复无效：${error}。请只回复修正后的 JSON 对象。`,
};
