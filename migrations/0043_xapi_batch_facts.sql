DROP INDEX `xapi_statements_batch_idx`;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `facts` text;