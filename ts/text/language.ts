/** The `language` setting as the text core understands it (docs/method.md §0: entity casing). */
export type TextLanguage = 'English' | 'Chinese';
