# fsarena built-in: filemicro_writefsync (appends with an fsync every $writeiters, 128 fsyncs; filebench's defaults).
set $dir=/tmp
set $iosize=8k
set $writeiters=1024
set $fsynccount=128
set mode quit firstdone

define file name=bigfile,path=$dir,size=0,prealloc

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=1
  {
    flowop appendfile name=append-file,filename=bigfile,iosize=$iosize,iters=$writeiters
    flowop fsync name=sync-file
    flowop finishoncount name=finish,value=$fsynccount,target=sync-file
  }
}
